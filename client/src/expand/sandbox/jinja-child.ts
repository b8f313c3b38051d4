/**
 * Entry of the Jinja rendering process (render-sandbox.ts): started with Node's permission
 * model, it renders one request at a time and answers over the IPC channel.
 */
import { JinjaRenderError, renderJinja } from '../jinja/compat.js';

interface Request {
  id: number;
  name: string;
  source: string;
  context: Record<string, unknown>;
  files: Record<string, string>;
}

function answer(message: Record<string, unknown>): void {
  process.send?.(message);
}

process.on('message', (raw: unknown) => {
  const request = raw as Request;
  try {
    const text = renderJinja(request.source, request.context, { name: request.name, files: request.files });
    answer({ id: request.id, ok: true, text });
  } catch (error) {
    if (error instanceof JinjaRenderError) {
      let kind: string = error.kind;
      let message = error.message;
      if (/Invalid (string|array|typed array) length|Array buffer allocation failed/.test(message)) {
        kind = 'limit';
        message = `ran out of memory (${message})`;
      }
      answer({ id: request.id, ok: false, kind, message, file: request.name, line: error.lineno ?? null });
    } else {
      const message = error instanceof Error ? error.message : String(error);
      const limit = error instanceof RangeError;
      answer({
        id: request.id,
        ok: false,
        kind: limit ? 'limit' : 'runtime',
        message,
        file: request.name,
        line: null,
      });
    }
  }
});

process.on('disconnect', () => process.exit(0));
answer({ ready: true });
