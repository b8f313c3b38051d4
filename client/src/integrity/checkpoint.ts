/**
 * Checkpoints (docs/integrity.md §3.2): the log's signed tree head, a signed note whose text is
 *
 *   <origin>\n              the log's name; the signing key has the same name
 *   <tree size>\n           decimal, no leading zeros
 *   <root hash>\n           standard base64 of the 32-byte RFC 6962 root
 *   [<extension line>\n]…   optional, kept but not interpreted
 *
 * as in the transparency-log checkpoint format Go's checksum database uses.
 */
import { integrityError } from './errors.js';
import type { LogSigner, LogVerifier } from './keys.js';
import { HASH_SIZE } from './merkle-hash.js';
import { openNote, signNote } from './note.js';

export const MAX_CHECKPOINT_EXTENSIONS = 16;

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
  extensions?: string[] | undefined;
}

/** A checkpoint whose signature verified, with the note it came in. */
export interface VerifiedCheckpoint extends Checkpoint {
  note: string;
}

/** The checkpoint's text (the part that is signed). */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, root, extensions = [] } = checkpoint;
  if (!Number.isSafeInteger(size) || size < 0) {
    throw integrityError(
      'CHECKSUM_CHECKPOINT_INVALID',
      `checkpoint size ${size} is not a whole number from 0 to 2^53 − 1`,
    );
  }
  if (root.length !== HASH_SIZE) {
    throw integrityError(
      'CHECKSUM_CHECKPOINT_INVALID',
      `checkpoint root is ${root.length} bytes, not ${HASH_SIZE}`,
    );
  }
  const lines = [origin, String(size), Buffer.from(root).toString('base64'), ...extensions];
  if (lines.some((l) => l === '' || l.includes('\n'))) {
    throw integrityError('CHECKSUM_CHECKPOINT_INVALID', 'a checkpoint line is empty or holds a newline');
  }
  return `${lines.join('\n')}\n`;
}

/** Parses a checkpoint's text (not a note: no signature is checked); `format(parse(t)) === t`. */
export function parseCheckpoint(text: string): Checkpoint {
  const bad = (why: string) =>
    integrityError('CHECKSUM_CHECKPOINT_INVALID', `the checkpoint is malformed: ${why}`);
  if (!text.endsWith('\n')) throw bad('its text does not end in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw bad('it needs an origin, a tree size and a root hash line');
  const [origin, sizeLine, rootLine, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin === '') throw bad('the origin line is empty');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeLine) || !Number.isSafeInteger(Number(sizeLine))) {
    throw bad(`tree size '${sizeLine.slice(0, 40)}' is not a decimal number from 0 to 2^53 − 1`);
  }
  if (!/^[A-Za-z0-9+/]{43}=$/.test(rootLine)) {
    throw bad(`root hash '${rootLine.slice(0, 60)}' is not the base64 of ${HASH_SIZE} bytes`);
  }
  if (extensions.length > MAX_CHECKPOINT_EXTENSIONS) {
    throw bad(`it has more than ${MAX_CHECKPOINT_EXTENSIONS} extension lines`);
  }
  if (extensions.some((l) => l === '')) throw bad('it has an empty line');
  return {
    origin,
    size: Number(sizeLine),
    root: Buffer.from(rootLine, 'base64'),
    ...(extensions.length > 0 ? { extensions } : {}),
  };
}

/** Signs a checkpoint of the signer's log; its origin must be the key's name. Returns the note. */
export function signCheckpoint(
  checkpoint: Omit<Checkpoint, 'origin'> & { origin?: string },
  signer: LogSigner,
): string {
  const origin = checkpoint.origin ?? signer.name;
  if (origin !== signer.name) {
    throw integrityError(
      'CHECKSUM_CHECKPOINT_INVALID',
      `a checkpoint of log '${origin}' cannot be signed with the key named '${signer.name}'`,
    );
  }
  return signNote(formatCheckpoint({ ...checkpoint, origin }), signer);
}

/**
 * Verifies a signed checkpoint with the log's verifier key and parses it. The signature is
 * checked before the text is read, and the origin must be the key's name, so a checkpoint of
 * another log signed by a key of the same name cannot pass for this one.
 */
export function verifyCheckpoint(note: string, verifier: LogVerifier): VerifiedCheckpoint {
  const checkpoint = parseCheckpoint(openNote(note, verifier));
  if (checkpoint.origin !== verifier.name) {
    throw integrityError(
      'CHECKSUM_CHECKPOINT_UNTRUSTED',
      `the checkpoint is of log '${checkpoint.origin.slice(0, 80)}', not of '${verifier.name}' whose key signed it`,
    );
  }
  return { ...checkpoint, note };
}
