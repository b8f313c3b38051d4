/**
 * Orders strings by code point, which is the order of their UTF-8 bytes: the same in every engine
 * and in git. (JavaScript's `<` compares UTF-16 code units, which puts U+10000… before U+E000….)
 */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  // When either string has no code unit in U+D800–U+FFFF, UTF-16 order is code point order.
  if (!HIGH.test(a) || !HIGH.test(b)) return a < b ? -1 : 1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return fixup(ca) - fixup(cb);
  }
  return a.length - b.length;
}

const HIGH = /[\uD800-\uFFFF]/;

/** Moves surrogates (U+D800–U+DFFF) above U+E000–U+FFFF, keeping each group's order. */
function fixup(c: number): number {
  if (c >= 0xe000) return c - 0x800;
  if (c >= 0xd800) return c + 0x2000;
  return c;
}
