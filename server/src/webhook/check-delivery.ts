/**
 * Which registries a GitHub delivery is for, and whether it is signed by them (docs/server.md,
 * "Webhooks"). Pure, and run in the webhook worker (delivery-worker.ts), never on the request
 * thread: the body is parsed first to learn the repository it is about, and only the secrets of
 * the registries of that repository are opened (decrypted with the server's key) and tried (an HMAC
 * over the body each), so a delivery costs the request thread the same with one GitHub registry or
 * a thousand.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { decryptSecret } from '../store/secrets.js';

/** A GitHub registry with a webhook secret, as the worker gets it. */
export interface DeliveryCandidate {
  /** Its index in the caller's list (what the answer names). */
  index: number;
  /** The registry's source, `github.com/<owner>/<repo>` (compared without case). */
  source: string;
  /** Its webhook secret as stored: sealed under the server's key (store/secrets.ts). */
  sealedSecret: string;
}

export type DeliveryCheck =
  /** Not JSON, or no `repository.full_name` string: no registry can be named, nothing verified. */
  | { kind: 'malformed'; message: string }
  /** No registry of that repository has a secret that signs the body. */
  | { kind: 'unsigned'; repository: string }
  | {
      kind: 'verified';
      /** The candidates whose secret signs the body (indexes into the caller's list). */
      verified: number[];
      ref: string | undefined;
      defaultBranch: string | undefined;
      /** `sha256:<hex>` of the body: how a replay is known (docs/server.md, "Webhooks"). */
      digest: string;
    };

/** Whether a registry whose source is `source` is the repository `fullName` (`owner/repo`). */
export function sourceIsRepository(source: string, fullName: string): boolean {
  return source.toLowerCase().endsWith(`/${fullName.toLowerCase()}`);
}

/** `sha256=<hex>` of `body` under `secret`, compared in constant time with `signature`. */
export function signatureMatches(secret: string, body: Uint8Array, signature: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether `candidate`'s secret signs `body`; a secret the key cannot open signs nothing. */
function signedBy(
  candidate: DeliveryCandidate,
  key: Uint8Array,
  body: Uint8Array,
  signature: string,
): boolean {
  let secret: string;
  try {
    secret = decryptSecret(Buffer.from(key.buffer, key.byteOffset, key.byteLength), candidate.sealedSecret);
  } catch {
    return false; // unreadable after a key change: this registry cannot verify anything
  }
  return signatureMatches(secret, body, signature);
}

export function checkDelivery(
  body: Uint8Array,
  signature: string,
  candidates: readonly DeliveryCandidate[],
  key: Uint8Array,
): DeliveryCheck {
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return { kind: 'malformed', message: 'the webhook body is not valid JSON' };
  }
  const repository = (payload as { repository?: unknown } | null)?.repository as
    | { full_name?: unknown; default_branch?: unknown }
    | undefined;
  const ref = (payload as { ref?: unknown } | null)?.ref;
  if (
    !payload ||
    typeof payload !== 'object' ||
    !repository ||
    typeof repository !== 'object' ||
    typeof repository.full_name !== 'string' ||
    (repository.default_branch !== undefined && typeof repository.default_branch !== 'string') ||
    (ref !== undefined && typeof ref !== 'string')
  ) {
    return {
      kind: 'malformed',
      message: 'the webhook body must be an object with repository.full_name (a string)',
    };
  }
  const fullName = repository.full_name;
  const verified = candidates
    .filter((c) => sourceIsRepository(c.source, fullName) && signedBy(c, key, body, signature))
    .map((c) => c.index);
  if (verified.length === 0) return { kind: 'unsigned', repository: fullName };
  return {
    kind: 'verified',
    verified,
    ref: ref as string | undefined,
    defaultBranch: repository.default_branch as string | undefined,
    digest: `sha256:${createHash('sha256').update(body).digest('hex')}`,
  };
}
