/**
 * Ed25519 log keys as text, in the style of Go's signed notes (docs/integrity.md §3):
 *
 *   verifier key  <name>+<key hash, 8 hex>+<base64(0x01 ‖ 32-byte public key)>
 *   signer key    PRIVATE+KEY+<name>+<key hash, 8 hex>+<base64(0x01 ‖ 32-byte seed)>
 *
 * The key hash is the first four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key), read as a
 * big-endian number; signatures carry it so a verifier picks the right key. A name is non-empty
 * UTF-8 without white space, `+` or control characters, typically the server's host[/path].
 * Only node:crypto does the cryptography. This is dm's one Ed25519 key module: air-gap bundles
 * (docs/mirroring.md) keep their keys as PEM files (PKCS#8 / SPKI) and generate, parse, sign and
 * verify with the functions below too (`generateEd25519Pem`, `parseEd25519Pem`, `signBytes`,
 * `verifyBytes`).
 */
import type { KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { integrityError } from './errors.js';

/**
 * node:crypto, loaded when a key is first used: this module is reached by dm's configuration
 * (verifier keys), which every command reads, and loading node:crypto is ~10 ms of CPU that
 * `dm expand` of local files never needs (docs/expansion.md, "Speed").
 */
function crypto(): typeof import('node:crypto') {
  // process.getBuiltinModule is Node >= 20.16 / 22.3.
  return process.getBuiltinModule?.('node:crypto') ?? createRequire(import.meta.url)('node:crypto');
}

export const ALG_ED25519 = 0x01;
const MAX_NAME_LENGTH = 256;
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface LogVerifier {
  name: string;
  keyHash: number;
  publicKey: KeyObject;
  /** The verifier key text this was parsed from (or made into). */
  text: string;
}

export interface LogSigner {
  name: string;
  keyHash: number;
  privateKey: KeyObject;
  /** The matching verifier key text, to hand to clients. */
  verifierKey: string;
}

/** Whether a key name is usable: non-empty UTF-8 without white space, '+' or control characters. */
export function isValidKeyName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= MAX_NAME_LENGTH &&
    Buffer.from(name, 'utf8').toString('utf8') === name &&
    !/[\s+\p{Cc}]/u.test(name)
  );
}

function checkName(name: string, where: string): void {
  if (!isValidKeyName(name)) {
    throw integrityError(
      'CHECKSUM_KEY_INVALID',
      `${where}: key name ${JSON.stringify(name.slice(0, 80))} must be non-empty, at most ${MAX_NAME_LENGTH} characters, without spaces, '+' or control characters`,
    );
  }
}

/** The 32-bit key hash of a named Ed25519 public key (raw 32 bytes). */
export function keyHash(name: string, rawPublicKey: Uint8Array): number {
  return crypto()
    .createHash('sha256')
    .update(`${name}\n`, 'utf8')
    .update(Buffer.from([ALG_ED25519]))
    .update(rawPublicKey)
    .digest()
    .readUInt32BE(0);
}

function rawPublic(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

function formatVerifierKey(name: string, raw: Uint8Array): string {
  return `${name}+${hex8(keyHash(name, raw))}+${Buffer.concat([Buffer.from([ALG_ED25519]), raw]).toString('base64')}`;
}

/** Makes a new Ed25519 key pair as PEM text: the private key (PKCS#8) and the public key (SPKI). */
export function generateEd25519Pem(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = crypto().generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Parses an Ed25519 key in PEM form (a private key: PKCS#8; a public key: SPKI, or the public half
 * of a private key); undefined when the text is not such a key (the caller names the file).
 */
export function parseEd25519Pem(text: string, kind: 'private' | 'public'): KeyObject | undefined {
  if (typeof text !== 'string' || text.length > 16 * 1024) return undefined;
  try {
    const key = kind === 'private' ? crypto().createPrivateKey(text) : crypto().createPublicKey(text);
    return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** Makes a new Ed25519 key pair named `name`; returns both keys as text. Keep the signer key secret. */
export function generateLogKey(name: string): { signerKey: string; verifierKey: string } {
  checkName(name, 'generateLogKey');
  const { privateKey, publicKey } = crypto().generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_PREFIX.length);
  const raw = rawPublic(publicKey);
  const hash = hex8(keyHash(name, raw));
  return {
    signerKey: `PRIVATE+KEY+${name}+${hash}+${Buffer.concat([Buffer.from([ALG_ED25519]), seed]).toString('base64')}`,
    verifierKey: formatVerifierKey(name, raw),
  };
}

/** Splits `<name>+<hash>+<data>`, checks the hash's form and the data's algorithm byte and length. */
function splitKey(text: string, where: string): { name: string; hash: number; key: Buffer } {
  const bad = (why: string) => integrityError('CHECKSUM_KEY_INVALID', `${where} is not a valid key: ${why}`);
  // The base64 data may itself hold '+': split at the first two only.
  const first = text.indexOf('+');
  const second = first === -1 ? -1 : text.indexOf('+', first + 1);
  if (second === -1) throw bad('expected <name>+<8 hex digits>+<base64 key>');
  const [name, hash, data] = [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
  checkName(name, where);
  if (!/^[0-9a-f]{8}$/.test(hash)) throw bad(`key hash '${hash}' is not 8 lowercase hex digits`);
  if (!/^[A-Za-z0-9+/]{44}$/.test(data)) throw bad('the key data is not the base64 of 33 bytes');
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length !== 33 || bytes[0] !== ALG_ED25519) {
    throw bad('the key data is not an Ed25519 key (algorithm byte 0x01 and 32 bytes)');
  }
  return { name, hash: Number.parseInt(hash, 16), key: bytes.subarray(1) };
}

/** Parses a verifier key; throws CHECKSUM_KEY_INVALID naming what is wrong. */
export function parseVerifierKey(text: string): LogVerifier {
  const where = 'the verifier key';
  if (typeof text !== 'string' || text.length > 1024)
    throw integrityError('CHECKSUM_KEY_INVALID', `${where} is not a key string`);
  const { name, hash, key } = splitKey(text.trim(), where);
  if (keyHash(name, key) !== hash) {
    throw integrityError(
      'CHECKSUM_KEY_INVALID',
      `${where} for '${name}' has key hash ${hex8(hash)}, which does not match its key`,
    );
  }
  const publicKey = crypto().createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, key]),
    format: 'der',
    type: 'spki',
  });
  return { name, keyHash: hash, publicKey, text: text.trim() };
}

/** Parses a signer key (`PRIVATE+KEY+…`); throws CHECKSUM_KEY_INVALID without echoing the secret. */
export function parseSignerKey(text: string): LogSigner {
  const where = 'the signer key';
  if (typeof text !== 'string' || !text.trim().startsWith('PRIVATE+KEY+') || text.length > 1024) {
    throw integrityError('CHECKSUM_KEY_INVALID', `${where} does not start with PRIVATE+KEY+`);
  }
  const { name, hash, key } = splitKey(text.trim().slice('PRIVATE+KEY+'.length), where);
  const privateKey = crypto().createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, key]),
    format: 'der',
    type: 'pkcs8',
  });
  const raw = rawPublic(crypto().createPublicKey(privateKey));
  if (keyHash(name, raw) !== hash) {
    throw integrityError(
      'CHECKSUM_KEY_INVALID',
      `${where} for '${name}' has key hash ${hex8(hash)}, which does not match its key`,
    );
  }
  return { name, keyHash: hash, privateKey, verifierKey: formatVerifierKey(name, raw) };
}

/** Signs bytes with a signer key, or a private key from a PEM file (Ed25519, 64-byte signature). */
export function signBytes(signer: Pick<LogSigner, 'privateKey'>, data: Uint8Array): Buffer {
  return crypto().sign(null, data, signer.privateKey);
}

/** Whether `signature` is the Ed25519 signature of `data` by the verifier key (or PEM public key). */
export function verifyBytes(
  verifier: Pick<LogVerifier, 'publicKey'>,
  data: Uint8Array,
  signature: Uint8Array,
): boolean {
  return signature.length === 64 && crypto().verify(null, data, verifier.publicKey, signature);
}
