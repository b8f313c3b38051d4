/**
 * Substitution, docs/layering.md "How rendering works", substitution: read a value from a source document's rendered data
 * (optionally through `src.pattern`), then write it into each destination (optionally through
 * `dest.pattern`, recursively with `dest.recurse`). Lenient mode (§12.2) skips what strict mode
 * reports.
 */
import { cloneData, getOwn, isMapping, type Mapping, setOwn } from './data.js';
import { describeDocument, documentDetails, type LayeredDocument } from './document.js';
import { layeringError } from './errors.js';
import { type ParsedPath, parsePath, readPath, writePath } from './path.js';
import { compilePythonRegex, pyStr, pySub } from './python.js';

export interface SubstitutionContext {
  /** (schema, name) key → the document substitution reads (a replacement stands for its parent). */
  sources: Map<string, LayeredDocument>;
  /** Rendered data so far. */
  current: Map<LayeredDocument, unknown>;
  lenient: boolean;
  /** Barbican reference → payload (§14); when set, encrypted sources' values are looked up here. */
  encryptionSources: ReadonlyMap<string, unknown> | undefined;
  warn: (code: string, message: string) => void;
}

export function sourceKey(schema: string, name: string): string {
  return `${schema}\u0000${name}`;
}

/** The (schema, name) a substitution entry reads from, when it is well-formed enough to say. */
export function substitutionSourceKey(sub: unknown): string | undefined {
  if (!isMapping(sub)) return undefined;
  const src = getOwn(sub, 'src');
  if (!isMapping(src)) return undefined;
  const schema = getOwn(src, 'schema');
  const name = getOwn(src, 'name');
  return typeof schema === 'string' && typeof name === 'string' ? sourceKey(schema, name) : undefined;
}

/** Python truthiness of JSON-like data. */
function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isMapping(value)) return Object.keys(value).length > 0;
  return true;
}

type Outcome = { ok: true; data: unknown; unmatched?: boolean } | { ok: false; reason: string };

function replaceRecursively(
  node: unknown,
  depth: number,
  regex: RegExp,
  pattern: string,
  value: string,
): string | undefined {
  // Iterative walk (bounded by the data's own size): level 0 = direct members of the destination.
  const stack: { node: unknown; level: number }[] = [{ node, level: 0 }];
  while (stack.length > 0) {
    const { node: cur, level } = stack.pop() as { node: unknown; level: number };
    if (depth !== -1 && level >= depth) continue;
    const visit = (get: () => unknown, set: (v: string) => void): string | undefined => {
      const member = get();
      if (typeof member === 'string') {
        // Quirk Q4: Deckhand only rewrites strings that contain the pattern as literal text.
        if (member.includes(pattern)) {
          const replaced = pySub(regex, value, member);
          if (typeof replaced !== 'string') return replaced.error;
          set(replaced);
        }
      } else if (typeof member === 'object' && member !== null) {
        stack.push({ node: member, level: level + 1 });
      }
      return undefined;
    };
    if (Array.isArray(cur)) {
      for (let i = 0; i < cur.length; i++) {
        const err = visit(
          () => cur[i],
          (v) => {
            cur[i] = v;
          },
        );
        if (err) return err;
      }
    } else if (isMapping(cur)) {
      for (const key of Object.keys(cur)) {
        const err = visit(
          () => cur[key],
          (v) => setOwn(cur, key, v),
        );
        if (err) return err;
      }
    }
  }
  return undefined;
}

/** §12.1: applies one destination to data X, which it may change in place. */
function applyDestination(x: unknown, value: unknown, dest: Mapping): Outcome {
  const rawPath = getOwn(dest, 'path');
  if (typeof rawPath !== 'string') return { ok: false, reason: 'dest.path is not a string' };
  const normalized = rawPath === '.' ? '$' : rawPath.startsWith('.') ? `$${rawPath}` : rawPath;
  if (normalized !== '$' && !normalized.startsWith('$.')) {
    return { ok: false, reason: `dest.path '${rawPath}' must start with '.' or '$.'` };
  }
  const steps: ParsedPath | string = parsePath(normalized, { requireRoot: true });
  if (typeof steps === 'string') return { ok: false, reason: steps };
  let target = readPath(x, steps);
  if (!target.found) {
    if (!isMapping(x))
      return { ok: false, reason: `cannot create '${rawPath}' in data that is not a mapping` };
    const created = writePath(x, steps, {});
    if (!created.ok) return { ok: false, reason: created.reason };
    target = readPath(x, steps);
  }
  const t = target.value;
  const patternValue = getOwn(dest, 'pattern');
  let newRoot: unknown;
  if (patternValue === undefined || patternValue === null || patternValue === '') {
    const written = writePath(x, steps, value);
    if (!written.ok) return { ok: false, reason: written.reason };
    newRoot = written.data;
  } else {
    if (typeof patternValue !== 'string') return { ok: false, reason: 'dest.pattern is not a string' };
    const regex = compilePythonRegex(patternValue, true);
    if (typeof regex === 'string') return { ok: false, reason: regex };
    const recurse = getOwn(dest, 'recurse');
    const recursive = isMapping(recurse) && Object.keys(recurse).length > 0;
    if (!recursive || typeof t === 'string') {
      if (typeof t !== 'string') {
        return {
          ok: false,
          reason: `dest.pattern needs a string at '${rawPath}', found ${describeValue(t)}`,
        };
      }
      const replaced = pySub(regex, pyStr(value), t);
      if (typeof replaced !== 'string') return { ok: false, reason: replaced.error };
      const written = writePath(x, steps, replaced);
      if (!written.ok) return { ok: false, reason: written.reason };
      newRoot = written.data;
    } else {
      const depth = getOwn(recurse, 'depth') ?? -1;
      if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < -1) {
        return { ok: false, reason: 'dest.recurse.depth must be an integer >= -1' };
      }
      if (typeof t !== 'object' || t === null) {
        return {
          ok: false,
          reason: `dest.recurse needs a mapping or list at '${rawPath}', found ${describeValue(t)}`,
        };
      }
      const err = replaceRecursively(t, depth, regex, patternValue, pyStr(value));
      if (err) return { ok: false, reason: err };
      newRoot = steps.length === 0 ? t : x;
    }
  }
  if (isMapping(x) && isMapping(newRoot)) {
    if (newRoot !== x) for (const key of Object.keys(newRoot)) setOwn(x, key, newRoot[key]);
    return { ok: true, data: x };
  }
  if (truthy(newRoot)) return { ok: true, data: newRoot };
  return { ok: false, reason: `failed to create JSON path '${rawPath}' (the result is empty)` };
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (isMapping(value)) return 'a mapping';
  return `a ${typeof value}`;
}

/** Applies one entry of `metadata.substitutions` to D's data; returns the new data. */
export function applySubstitution(
  sub: unknown,
  doc: LayeredDocument,
  data: unknown,
  ctx: SubstitutionContext,
): unknown {
  const malformed = (what: string): never => {
    throw layeringError(
      'InvalidDocumentFormat',
      `${describeDocument(doc)}: substitution ${what}`,
      documentDetails(doc),
    );
  };
  if (!isMapping(sub)) malformed('is not a mapping with src and dest');
  const entry = sub as Mapping;
  const src = getOwn(entry, 'src');
  if (!isMapping(src)) return malformed('has no src mapping');
  const srcSchema = getOwn(src, 'schema');
  const srcName = getOwn(src, 'name');
  if (typeof srcSchema !== 'string' || typeof srcName !== 'string') {
    return malformed('src needs string schema and name');
  }
  const destField = getOwn(entry, 'dest');
  const dests = Array.isArray(destField) ? destField : [destField];
  for (const d of dests) if (!isMapping(d)) malformed('dest must be a mapping or a list of mappings');
  const srcPathText = getOwn(src, 'path');
  const srcRef = `${srcSchema} '${srcName}'`;

  const source = ctx.sources.get(sourceKey(srcSchema, srcName));
  if (source === undefined) {
    const message = `${describeDocument(doc)}: substitution source ${srcRef} is not a concrete document in the set`;
    if (ctx.lenient) {
      ctx.warn('SubstitutionSourceNotFound', `${message}; substitution skipped`);
      return data;
    }
    throw layeringError(
      'SubstitutionSourceNotFound',
      message,
      { ...documentDetails(doc), src: { schema: srcSchema, name: srcName } },
      'abstract documents are never sources; --lenient-substitution skips a missing source',
    );
  }
  const sourceData = ctx.current.get(source) ?? null;
  let value: unknown;
  if (isMapping(sourceData)) {
    if (typeof srcPathText !== 'string') return malformed(`from ${srcRef} has no string src.path`);
    const steps = parsePath(srcPathText);
    if (typeof steps === 'string') return malformed(`src.path: ${steps}`);
    value = readPath(sourceData, steps).value;
  } else {
    value = sourceData;
  }
  if (value === undefined || value === null) {
    const message = `${describeDocument(doc)}: substitution source ${srcRef} has no value at '${String(srcPathText)}'`;
    if (!ctx.lenient) {
      throw layeringError('SubstitutionSourceDataNotFound', message, {
        ...documentDetails(doc),
        src: { schema: srcSchema, name: srcName, path: srcPathText },
      });
    }
    ctx.warn('SubstitutionSourceDataNotFound', `${message}; substituting null`);
    value = null;
  }
  if (ctx.encryptionSources !== undefined && isEncrypted(source) && typeof value === 'string') {
    if (!ctx.encryptionSources.has(value)) {
      throw layeringError(
        'EncryptionSourceNotFound',
        `${describeDocument(doc)}: substitution source ${srcRef} is encrypted and its reference is not among the encryption sources`,
        { ...documentDetails(doc), src: { schema: srcSchema, name: srcName } },
      );
    }
    value = ctx.encryptionSources.get(value);
  }
  const unknown = (reason: string, destPath?: unknown): void => {
    const message = `${describeDocument(doc)}: substitution from ${srcRef}${destPath === undefined ? '' : ` into '${String(destPath)}'`} failed: ${reason}`;
    if (ctx.lenient) {
      ctx.warn('UnknownSubstitutionError', `${message}; destination skipped`);
      return;
    }
    throw layeringError('UnknownSubstitutionError', message, {
      ...documentDetails(doc),
      src: { schema: srcSchema, name: srcName, path: srcPathText },
      ...(destPath === undefined ? {} : { dest: destPath }),
    });
  };

  const srcPattern = getOwn(src, 'pattern');
  if (srcPattern !== undefined && srcPattern !== null && srcPattern !== '') {
    const applied = applySourcePattern(value, srcPattern, getOwn(src, 'match_group'));
    if (!applied.ok) {
      unknown(applied.reason);
      return data;
    }
    if (applied.unmatched) {
      ctx.warn(
        'SourcePatternNotMatched',
        `${describeDocument(doc)}: src.pattern '${String(srcPattern)}' does not match the value from ${srcRef}; the whole value is used`,
      );
    }
    value = applied.data;
  }
  // Always a deep copy (quirk Q8): later writes never alias the source.
  let out = data;
  for (const dest of dests as Mapping[]) {
    const working = ctx.lenient ? cloneData(out) : out;
    const result = applyDestination(working, cloneData(value), dest);
    if (result.ok) out = result.data;
    else unknown(result.reason, getOwn(dest, 'path'));
  }
  return out;
}

function isEncrypted(doc: LayeredDocument): boolean {
  const metadata = getOwn(doc.raw, 'metadata');
  return isMapping(metadata) && getOwn(metadata, 'storagePolicy') === 'encrypted';
}

function applySourcePattern(value: unknown, pattern: unknown, matchGroup: unknown): Outcome {
  if (typeof pattern !== 'string') return { ok: false, reason: 'src.pattern is not a string' };
  if (typeof value !== 'string') {
    return { ok: false, reason: `src.pattern needs a string value, found ${describeValue(value)}` };
  }
  const regex = compilePythonRegex(pattern, false);
  if (typeof regex === 'string') return { ok: false, reason: regex };
  const match = regex.exec(value);
  if (!match) return { ok: true, data: value, unmatched: true };
  const group = matchGroup ?? 0;
  if (typeof group !== 'number' || !Number.isInteger(group) || group < 0 || group >= match.length) {
    return { ok: false, reason: `src.match_group ${JSON.stringify(group)} is not a group of '${pattern}'` };
  }
  return { ok: true, data: match[group] ?? null };
}
