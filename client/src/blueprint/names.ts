/**
 * Object names of Landscaper's contexts (docs/blueprints.md "Contexts and object names"): `GenerateDataObjectName`.
 */
import { createHash } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32, lower case, without padding. */
export function base32LowerNoPad(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function isDnsSubdomain(s: string): boolean {
  return s.length <= 253 && DNS_SUBDOMAIN.test(s);
}

/**
 * The name of the DataObject or Target that holds `key` in context `ctx`: the key itself in the
 * root context (when it is a DNS subdomain), the key without `#` for global references, else
 * base32(sha1(ctx + "/" + key)).
 */
export function generateDataObjectName(ctx: string, key: string): string {
  if (key.startsWith('#')) return key.slice(1);
  if (ctx === '' && isDnsSubdomain(key)) return key;
  return base32LowerNoPad(createHash('sha1').update(`${ctx}/${key}`).digest());
}

/** The context an installation opens for its subinstallations. */
export function installationContext(name: string): string {
  return `Inst.${name}`;
}
