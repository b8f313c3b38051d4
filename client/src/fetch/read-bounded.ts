/**
 * Reads an HTTP answer's body with a bound (docs/server.md "Bounds", docs/oci.md "Bounds"): a
 * declared length over the bound is refused before reading, and a body that grows past it is
 * cancelled at the chunk that does, so no answer costs more memory than its bound.
 */
import type { DmError } from '../error.js';

export async function readBounded(
  response: Response,
  limit: number,
  tooLarge: () => DmError,
): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return Buffer.concat(chunks, total);
}
