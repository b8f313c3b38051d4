/**
 * Secrets at rest (docs/server.md "Sources and names"): source credentials and webhook secrets are encrypted with
 * AES-256-GCM under the server's key (DM_REGISTRY_SECRET_KEY, or a key file created under the data
 * directory); API tokens are stored as sha256 hashes only. None of them is ever returned or logged.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { DmError } from '../../../client/src/error.js';

export function encryptSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function decryptSecret(key: Buffer, stored: string): string {
  const raw = Buffer.from(stored, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw new DmError('SECRET_UNREADABLE', 'a stored secret cannot be decrypted with the configured key', {
      category: 'error',
      hint: 'was DM_REGISTRY_SECRET_KEY or the key file changed?',
    });
  }
}

/** A 32-byte key from base64 text, or from a key file (created, with its directory, mode 0600 when missing). */
export function loadSecretKey(options: { keyBase64?: string | undefined; keyFile: string }): Buffer {
  if (options.keyBase64) {
    const key = Buffer.from(options.keyBase64, 'base64');
    if (key.length !== 32) {
      throw new DmError('INVALID_SECRET_KEY', 'DM_REGISTRY_SECRET_KEY must be 32 bytes, base64-encoded', {
        category: 'usage',
      });
    }
    return key;
  }
  if (existsSync(options.keyFile)) return Buffer.from(readFileSync(options.keyFile, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  // The data directory may not exist yet (PostgreSQL: ./data, which nothing else created).
  mkdirSync(dirname(options.keyFile), { recursive: true });
  writeFileAtomic.sync(options.keyFile, `${key.toString('base64')}\n`, { mode: 0o600 });
  return key;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new API token: `dmr_` + 32 random bytes, base64url. */
export function newToken(): string {
  return `dmr_${randomBytes(32).toString('base64url')}`;
}
