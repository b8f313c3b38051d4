/**
 * Python's one-character backslash escapes: `\n` and friends, as Python reads them in a string
 * literal and in `re.sub`'s replacement template. The one table for both readers: Jinja's string
 * literals (expand/jinja/python-lexer.ts) and the layering's `re.sub` (layer/python.ts); each adds
 * what only its own syntax has (docs/expansion.md, docs/layering.md).
 */
export const PYTHON_CHARACTER_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};
