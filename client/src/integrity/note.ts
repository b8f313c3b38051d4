/**
 * Signed notes in the style of Go's sumdb notes (docs/integrity.md §3.1): a text of one or more
 * non-empty lines, each ending in "\n", then a blank line, then signature lines
 *
 *   — <key name> <base64(4-byte key hash ‖ signature)>\n
 *
 * (U+2014 EM DASH, a space). Every signature covers the text including its last newline. A note
 * may carry signatures by keys the reader does not know (witnesses, a rotated key); the reader
 * trusts the note when the signature by its own key verifies, and rejects it when that signature
 * is there but wrong.
 */
import { integrityError } from './errors.js';
import { type LogSigner, type LogVerifier, signBytes, verifyBytes } from './keys.js';

export const MAX_NOTE_BYTES = 64 * 1024;
export const MAX_NOTE_SIGNATURES = 100;
const SIGNATURE_PREFIX = '\u2014 ';

export interface NoteSignature {
  name: string;
  keyHash: number;
  signature: Buffer;
}

/** Rejects what a note's text may not hold; `what` names the thing in the message. */
function checkText(text: string, what: string): void {
  if (text === '' || !text.endsWith('\n')) {
    throw integrityError('CHECKSUM_CHECKPOINT_INVALID', `${what} must be non-empty text ending in a newline`);
  }
  if (text.includes('\n\n')) {
    throw integrityError(
      'CHECKSUM_CHECKPOINT_INVALID',
      `${what} has an empty line, which only ends the text of a note`,
    );
  }
  if (/(?!\n)\p{Cc}/u.test(text) || Buffer.from(text, 'utf8').toString('utf8') !== text) {
    throw integrityError(
      'CHECKSUM_CHECKPOINT_INVALID',
      `${what} has a control character or is not valid UTF-8`,
    );
  }
}

/** Signs `text` (non-empty lines, each ending in a newline) with one key; returns the note. */
export function signNote(text: string, signer: LogSigner): string {
  checkText(text, 'the text of a note');
  const hash = Buffer.alloc(4);
  hash.writeUInt32BE(signer.keyHash);
  const signature = signBytes(signer, Buffer.from(text, 'utf8'));
  return `${text}\n${SIGNATURE_PREFIX}${signer.name} ${Buffer.concat([hash, signature]).toString('base64')}\n`;
}

/** Splits a note into its text and signatures without verifying any; throws for a malformed note. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  const bad = (why: string) =>
    integrityError('CHECKSUM_CHECKPOINT_INVALID', `the signed note is malformed: ${why}`);
  if (typeof note !== 'string') throw bad('it is not text');
  if (Buffer.byteLength(note, 'utf8') > MAX_NOTE_BYTES)
    throw bad(`it is larger than ${MAX_NOTE_BYTES} bytes`);
  const split = note.lastIndexOf('\n\n');
  if (split === -1) throw bad('it has no blank line before its signatures');
  const text = note.slice(0, split + 1);
  checkText(text, 'the text of the signed note');
  const lines = note.slice(split + 2);
  if (!lines.endsWith('\n')) throw bad('its last signature line does not end in a newline');
  const signatures = lines
    .slice(0, -1)
    .split('\n')
    .map((line, i): NoteSignature => {
      if (i >= MAX_NOTE_SIGNATURES) throw bad(`it has more than ${MAX_NOTE_SIGNATURES} signatures`);
      const m = /^\u2014 ([^\s+]+) ([A-Za-z0-9+/]+={0,2})$/u.exec(line);
      const bytes = m ? Buffer.from(m[2]!, 'base64') : Buffer.alloc(0);
      if (!m || bytes.length < 5 || bytes.toString('base64') !== m[2]) {
        throw bad(`signature line ${i + 1} is not '— <name> <base64 signature>'`);
      }
      return { name: m[1]!, keyHash: bytes.readUInt32BE(0), signature: bytes.subarray(4) };
    });
  return { text, signatures };
}

/**
 * Returns the text of `note` once the verifier's signature on it verifies. Throws
 * CHECKSUM_CHECKPOINT_INVALID for a malformed note, CHECKSUM_CHECKPOINT_UNTRUSTED when the
 * verifier's key did not sign it, CHECKSUM_SIGNATURE_INVALID when its signature is wrong.
 */
export function openNote(note: string, verifier: LogVerifier): string {
  const { text, signatures } = parseNote(note);
  const mine = signatures.find((s) => s.name === verifier.name && s.keyHash === verifier.keyHash);
  if (mine === undefined) {
    const names = [...new Set(signatures.map((s) => s.name))].join(', ');
    throw integrityError(
      'CHECKSUM_CHECKPOINT_UNTRUSTED',
      `the signed note is not signed by the trusted key ${verifier.name}+${verifier.keyHash.toString(16).padStart(8, '0')} (signed by: ${names})`,
      { hint: 'check the verifier key configured for this registry server' },
    );
  }
  if (!verifyBytes(verifier, Buffer.from(text, 'utf8'), mine.signature)) {
    throw integrityError(
      'CHECKSUM_SIGNATURE_INVALID',
      `the signature by ${verifier.name} does not verify: the signed note was altered after it was signed`,
    );
  }
  return text;
}
