/**
 * `dm.lock` (docs/client.md "dm.lock"): one entry per reference as written (canonical form), with the
 * exact version, the registry commit, the version digest and every file's digest. The text is
 * stable: the same resolutions give a byte-identical file whatever order they were found in.
 */
import { readFile } from 'node:fs/promises';
import writeFileAtomic from 'write-file-atomic';
import { parseYaml } from '../document/yaml.js';
import { DmError, fromSystemError } from '../error.js';
import { tryParseVersion } from '../reference/version.js';
import { versionDigest } from '../registry/digest.js';
import type { TemplateKind } from '../registry/types.js';
import type { ResolvedVersion } from './types.js';

export const LOCKFILE_VERSION = 1;
export const LOCKFILE_NAME = 'dm.lock';

export interface LockEntry {
  template: string;
  version: string;
  commit: string;
  kind: TemplateKind;
  templateFile: string;
  schemaFile?: string | undefined;
  digest: string;
  /** The OCI manifest digest, for `oci://` references (docs/oci.md "dm.lock"). */
  manifest?: string | undefined;
  /** path → { sha256, size } */
  files: Record<string, { sha256: string; size: number }>;
}

export interface LockFile {
  lockfileVersion: number;
  /** canonical reference as written → entry */
  references: Record<string, LockEntry>;
}

export function emptyLockFile(): LockFile {
  return { lockfileVersion: LOCKFILE_VERSION, references: {} };
}

export function lockEntryFor(resolved: ResolvedVersion): LockEntry {
  const files: LockEntry['files'] = {};
  for (const f of [...resolved.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    files[f.path] = { sha256: f.sha256, size: f.size };
  }
  return {
    template: resolved.template,
    version: resolved.version,
    commit: resolved.commit,
    kind: resolved.kind,
    templateFile: resolved.templateFile,
    ...(resolved.schemaFile ? { schemaFile: resolved.schemaFile } : {}),
    digest: resolved.digest,
    ...(resolved.manifest ? { manifest: resolved.manifest } : {}),
    files,
  };
}

export function resolvedFromLock(reference: string, entry: LockEntry): ResolvedVersion {
  return {
    reference,
    template: entry.template,
    version: entry.version,
    commit: entry.commit,
    kind: entry.kind,
    templateFile: entry.templateFile,
    schemaFile: entry.schemaFile,
    digest: entry.digest,
    ...(entry.manifest ? { manifest: entry.manifest } : {}),
    files: Object.entries(entry.files).map(([path, f]) => ({ path, sha256: f.sha256, size: f.size })),
  };
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const PLAIN = /^[A-Za-z][A-Za-z0-9_./@=+-]*$/;
const RESERVED = /^(?:true|false|null|yes|no|on|off|y|n|~)$/i;

/** A YAML scalar: plain when unambiguous, else a JSON string (valid YAML double-quoted). */
function scalar(value: string | number): string {
  if (typeof value === 'number') return String(value);
  return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
}

/**
 * The lock file's text: keys sorted, entries' fields in a fixed order. Written by a small emitter
 * for this one fixed shape (every string quoted unless plainly unambiguous), which is both faster
 * than a general YAML dumper and stable across YAML library versions.
 */
export function formatLockFile(lock: LockFile): string {
  const lines = [
    '# dm.lock: written by dm install; do not edit by hand.',
    `lockfileVersion: ${lock.lockfileVersion}`,
  ];
  const keys = Object.keys(lock.references).sort(byKey);
  lines.push(keys.length === 0 ? 'references: {}' : 'references:');
  for (const key of keys) {
    const e = lock.references[key]!;
    lines.push(`  ${scalar(key)}:`);
    lines.push(`    template: ${scalar(e.template)}`);
    lines.push(`    version: ${scalar(e.version)}`);
    lines.push(`    commit: ${scalar(e.commit)}`);
    lines.push(`    kind: ${scalar(e.kind)}`);
    lines.push(`    templateFile: ${scalar(e.templateFile)}`);
    if (e.schemaFile) lines.push(`    schemaFile: ${scalar(e.schemaFile)}`);
    lines.push(`    digest: ${scalar(e.digest)}`);
    if (e.manifest) lines.push(`    manifest: ${scalar(e.manifest)}`);
    const paths = Object.keys(e.files).sort(byKey);
    lines.push(paths.length === 0 ? '    files: {}' : '    files:');
    for (const path of paths) {
      const f = e.files[path]!;
      lines.push(`      ${scalar(path)}: {sha256: ${scalar(f.sha256)}, size: ${f.size}}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const SHA = /^sha256:[0-9a-f]{64}$/;
const HEX = /^[0-9a-f]{64}$/;
const KINDS = new Set(['jinja', 'python', 'blueprint']);

function bad(source: string, path: string, what: string): DmError {
  return new DmError('INVALID_LOCKFILE', `${source}: ${path} ${what}`, {
    category: 'invalid-input',
    hint: 'run dm install to write it again',
  });
}

/**
 * Reads text in exactly the shape `formatLockFile` writes, without a YAML parser (the warm
 * `dm install` path); anything else — a hand-edited lock — returns undefined and goes to the YAML
 * parser. Scalars are plain or JSON-quoted, as the emitter writes them.
 */
function parseOwnFormat(text: string): unknown {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let i = 0;
  if (lines[i]?.startsWith('#')) i++;
  const version = /^lockfileVersion: (\d+)$/.exec(lines[i++] ?? '');
  if (!version) return undefined;
  const value = (raw: string): string | undefined => {
    if (raw.startsWith('"')) {
      try {
        const v: unknown = JSON.parse(raw);
        return typeof v === 'string' ? v : undefined;
      } catch {
        return undefined;
      }
    }
    return PLAIN.test(raw) && !RESERVED.test(raw) ? raw : undefined;
  };
  const references: Record<string, Record<string, unknown>> = {};
  const header = lines[i++];
  if (header === 'references: {}')
    return i === lines.length ? { lockfileVersion: Number(version[1]), references } : undefined;
  if (header !== 'references:') return undefined;
  const FIELD = /^ {4}(template|version|commit|kind|templateFile|schemaFile|digest|manifest): (.*)$/;
  const FILE = /^ {6}(.+): \{sha256: (.+), size: (\d+)\}$/;
  while (i < lines.length) {
    const key = /^ {2}(.+):$/.exec(lines[i++]!);
    const name = key ? value(key[1]!) : undefined;
    if (name === undefined || name in references) return undefined;
    const entry: Record<string, unknown> = {};
    for (let m = FIELD.exec(lines[i] ?? ''); m; m = FIELD.exec(lines[i] ?? '')) {
      const v = value(m[2]!);
      if (v === undefined) return undefined;
      entry[m[1]!] = v;
      i++;
    }
    const filesLine = lines[i++];
    const files: Record<string, unknown> = {};
    if (filesLine === '    files:') {
      for (let m = FILE.exec(lines[i] ?? ''); m; m = FILE.exec(lines[i] ?? '')) {
        const path = value(m[1]!);
        const sha256 = value(m[2]!);
        if (path === undefined || sha256 === undefined) return undefined;
        files[path] = { sha256, size: Number(m[3]) };
        i++;
      }
    } else if (filesLine !== '    files: {}') {
      return undefined;
    }
    entry.files = files;
    references[name] = entry;
  }
  return { lockfileVersion: Number(version[1]), references };
}

/** Parses and checks a lock file; errors name the file and the property path. */
export function parseLockFile(text: string, source = LOCKFILE_NAME): LockFile {
  const data = parseOwnFormat(text) ?? parseYaml(text, { source });
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw bad(source, '(top level)', 'must be a mapping');
  const raw = data as Record<string, unknown>;
  if (raw.lockfileVersion !== LOCKFILE_VERSION) {
    throw bad(
      source,
      'lockfileVersion',
      `is ${JSON.stringify(raw.lockfileVersion)}; this dm reads version ${LOCKFILE_VERSION}`,
    );
  }
  const refs = raw.references ?? {};
  if (typeof refs !== 'object' || refs === null || Array.isArray(refs))
    throw bad(source, 'references', 'must be a mapping');
  const references: Record<string, LockEntry> = {};
  for (const [key, value] of Object.entries(refs)) {
    const at = `references["${key}"]`;
    if (typeof value !== 'object' || value === null) throw bad(source, at, 'must be a mapping');
    const e = value as Record<string, unknown>;
    for (const field of ['template', 'version', 'commit', 'templateFile', 'digest'] as const) {
      if (typeof e[field] !== 'string') throw bad(source, `${at}.${field}`, 'must be a string');
    }
    if (e.version !== '' && !tryParseVersion(e.version as string))
      throw bad(
        source,
        `${at}.version`,
        `is '${String(e.version)}', not a version (v<MAJOR>.<MINOR>.<PATCH>)`,
      );
    if (!KINDS.has(e.kind as string)) throw bad(source, `${at}.kind`, 'must be jinja, python or blueprint');
    if (!SHA.test(e.digest as string)) throw bad(source, `${at}.digest`, 'must be sha256:<64 hex digits>');
    if (e.manifest !== undefined && !(typeof e.manifest === 'string' && SHA.test(e.manifest)))
      throw bad(source, `${at}.manifest`, 'must be sha256:<64 hex digits>');
    if (typeof e.files !== 'object' || e.files === null)
      throw bad(source, `${at}.files`, 'must be a mapping');
    const files: LockEntry['files'] = {};
    for (const [path, f] of Object.entries(e.files as Record<string, unknown>)) {
      const file = f as { sha256?: unknown; size?: unknown } | null;
      if (!file || typeof file.sha256 !== 'string' || !HEX.test(file.sha256)) {
        throw bad(source, `${at}.files["${path}"].sha256`, 'must be 64 lowercase hex digits');
      }
      if (typeof file.size !== 'number' || !Number.isSafeInteger(file.size) || file.size < 0) {
        throw bad(source, `${at}.files["${path}"].size`, 'must be a size in bytes');
      }
      files[path] = { sha256: file.sha256, size: file.size };
    }
    const listed = Object.entries(files).map(([path, f]) => ({ path, sha256: f.sha256 }));
    if (versionDigest(listed) !== e.digest) {
      throw bad(
        source,
        `${at}.digest`,
        'does not match the files listed under it (the lock was edited or damaged)',
      );
    }
    references[key] = {
      template: e.template as string,
      version: e.version as string,
      commit: e.commit as string,
      kind: e.kind as TemplateKind,
      templateFile: e.templateFile as string,
      ...(typeof e.schemaFile === 'string' ? { schemaFile: e.schemaFile } : {}),
      digest: e.digest as string,
      ...(typeof e.manifest === 'string' ? { manifest: e.manifest } : {}),
      files,
    };
  }
  return { lockfileVersion: LOCKFILE_VERSION, references };
}

/**
 * A lock file's text; undefined when there is none. One that cannot be read (a directory, no
 * permission) is a sentence naming it.
 */
export async function readLockText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fromSystemError(error, path) ?? error;
  }
}

/** Reads a lock file; undefined when there is none. */
export async function readLockFile(path: string): Promise<LockFile | undefined> {
  const text = await readLockText(path);
  return text === undefined ? undefined : parseLockFile(text, path);
}

/** Writes a lock file atomically (temp file + rename). */
export async function writeLockFile(path: string, lock: LockFile): Promise<void> {
  await writeFileAtomic(path, formatLockFile(lock));
}
