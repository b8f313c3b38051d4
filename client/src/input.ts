/**
 * What a command's argument is — decided once, for expand, deploy, install and blueprint
 * (docs/client.md "What an argument is"): an existing directory, a template file (`.jinja`,
 * `.py`), another file (a configuration, or documents), or a registry reference / URL. A bare
 * template and a reference become the one-resource configuration DM built for them.
 */
import { opendirSync, readFileSync, readSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DmError, fromSystemError } from './error.js';
import { nearest } from './nearest.js';

export type InputKind = 'directory' | 'template' | 'file' | 'reference';

export interface Input {
  kind: InputKind;
  /** The argument as given. */
  arg: string;
  /** The file or directory (files and directories only). */
  path?: string;
  /** The file's text (templates and files). */
  text?: string;
  /**
   * What to expand: the file itself; for a template or a reference, the one-resource
   * configuration naming it. Absent for a directory.
   */
  configuration?: { content: string; path: string };
  /** `env.deployment` the expansion uses when the command names none (templates and references). */
  deployment?: string;
  /** The default deployment name: a file's base name, a reference's template name (DNS-label form). */
  name: string;
}

export interface LoadInputOptions {
  /** Where the one-resource configuration of a reference is said to live (default: process.cwd()). */
  cwd?: string;
  /** Name of the one resource built for a template or a reference (default: its own name). */
  deployment?: string;
  /** The kinds the command takes (default: all); another kind is an error saying what it takes. */
  accept?: readonly InputKind[];
  /** What the command calls its argument in messages (default 'argument'). */
  what?: string;
}

const TEMPLATE_FILE = /\.(jinja|py)$/;
const FILE_NAME = /\.(ya?ml|json|jinja|py)$/i;

/**
 * Whether an argument that is not on disk names a registry reference or URL (`redis:v1`,
 * `github.com/o/r/t:v1`, `https://…`) rather than a missing file (`./x`, `configs/app.yaml`).
 */
export function looksLikeReference(arg: string): boolean {
  if (/^(\.{0,2}\/|~)/.test(arg)) return false;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return true;
  if (!/[:/]/.test(arg)) return false;
  return arg.includes(':') || !FILE_NAME.test(arg);
}

const TEMPLATE_TYPE = /^[a-z][a-z0-9+.-]*:\/\/|:=?v\d/i;

/**
 * Whether a resource *type* names a template by reference or URL (expansion asks this of every
 * type). Stricter than looksLikeReference: `compute.v1:instances` and other primitive types with a
 * colon stay primitives unless the part after the colon is a version.
 */
export function isTemplateReferenceType(type: string): boolean {
  return TEMPLATE_TYPE.test(type);
}

const VERSION_WITHOUT_V = /^([^\s:]+):(=?)(\d+(?:\.\d+){0,2}(?:[-+][0-9A-Za-z.-]+)?)$/;

/**
 * A type that is a reference but for the `v` of its version (`redis:1.0`, `…/redis:=1.2.3`): the
 * type as it was meant (`redis:v1.0`), else undefined. Such a type is a primitive, as DM took it;
 * expansion warns (docs/references.md).
 */
export function referenceMissingV(type: string): string | undefined {
  const m = VERSION_WITHOUT_V.exec(type);
  return m ? `${m[1]}:${m[2]}v${m[3]}` : undefined;
}

/** What expansion and dm install say about such a type (`referenceMissingV`), or undefined. */
export function missingVWarning(type: string, name: unknown): string | undefined {
  const meant = referenceMissingV(type);
  return meant === undefined
    ? undefined
    : `type '${type}'${typeof name === 'string' ? ` of '${name}'` : ''} looks like a template reference, but its version lacks the 'v' (${meant}?); treated as a primitive`;
}

/** The one-resource configuration DM builds for `dm expand|deploy <template or reference>`. */
export function oneResourceConfiguration(name: string, type: string): string {
  return `resources:\n- name: ${JSON.stringify(name)}\n  type: ${JSON.stringify(type)}\n`;
}

/** The default deployment name for an argument: a file's base name, a reference's template name. */
export function defaultInputName(arg: string, isPath: boolean): string {
  const base = isPath
    ? basename(arg).replace(/\.[^.]*$/, '')
    : (
        arg
          .replace(/[?#].*$/, '')
          .split('/')
          .pop() ?? arg
      ).split(/[:@]/)[0]!;
  return base
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 53);
}

function kindOnDisk(arg: string): 'directory' | 'file' | undefined {
  try {
    return statSync(arg).isDirectory() ? 'directory' : 'file';
  } catch {
    return undefined;
  }
}

/** Most entries of a directory read for a "did you mean". */
const NEARBY_ENTRIES = 10_000;

/**
 * The file a path that does not exist was probably meant to name (`confg.yaml` → `config.yaml`):
 * the nearest name in its directory, written as the user wrote the path (`shown`, directory part kept).
 */
export function nearbyFile(path: string, shown = path): string | undefined {
  const dir = dirname(path);
  const names: string[] = [];
  try {
    const entries = opendirSync(dir);
    try {
      for (let e = entries.readSync(); e !== null && names.length < NEARBY_ENTRIES; e = entries.readSync()) {
        if (e.isFile() && !e.name.startsWith('.')) names.push(e.name);
      }
    } finally {
      entries.closeSync();
    }
  } catch {
    return undefined; // the directory itself is missing or unreadable: nothing nearby
  }
  const near = nearest(basename(path), names);
  return near === undefined ? undefined : shown.slice(0, shown.length - basename(shown).length) + near;
}

/**
 * A text file's content, or one sentence saying why not: a system error as `fromSystemError` says
 * it (FILE_NOT_FOUND, IS_A_DIRECTORY, PERMISSION_DENIED, …), anything else FILE_NOT_FOUND. Every
 * command that reads a file it was named reads it here; `shown` is the name the user gave it.
 */
export function readTextFile(path: string, shown = path): string {
  if (shown === STDIN) return readStandardInput();
  try {
    // A named pipe, a device or a socket would block or never end: refused before it is opened.
    const info = statSync(path);
    if (!info.isFile() && !info.isDirectory()) {
      throw new DmError('FILE_UNREADABLE', `${shown} is not a regular file (${specialKind(info)})`, {
        hint: `save it to a file first, or pass it on standard input as '-'`,
      });
    }
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof DmError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      const near = nearbyFile(path, shown);
      throw new DmError('FILE_NOT_FOUND', `${shown} does not exist`, {
        cause: error,
        ...(near ? { hint: `did you mean ${near}?` } : {}),
      });
    }
    throw (
      fromSystemError(error, shown) ??
      new DmError(
        code === 'ENOENT' ? 'FILE_NOT_FOUND' : 'FILE_UNREADABLE',
        `cannot read ${shown}: ${code ?? String(error)}`,
      )
    );
  }
}

/** The argument that means standard input (`cat c.yaml | dm expand -`, docs/client.md "What an argument is"). */
export const STDIN = '-';

/** Largest standard input read, bytes. */
const MAX_STDIN_BYTES = 64 * 1024 * 1024;

/** Standard input, whole, as text (read once: a second `-` gets what is left, nothing). */
export function readStandardInput(): string {
  const chunks: Buffer[] = [];
  let size = 0;
  const buffer = Buffer.alloc(1 << 16);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // a non-blocking terminal
        continue;
      }
      if (code === 'EOF') break;
      throw new DmError('FILE_UNREADABLE', `cannot read standard input: ${code ?? String(error)}`);
    }
    if (n === 0) break;
    size += n;
    if (size > MAX_STDIN_BYTES)
      throw new DmError(
        'FILE_UNREADABLE',
        `standard input is larger than ${MAX_STDIN_BYTES / 1024 / 1024} MiB`,
      );
    chunks.push(Buffer.from(buffer.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function specialKind(info: Stats): string {
  if (info.isFIFO()) return 'a named pipe';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a file';
}

const DESCRIBE: Record<InputKind, string> = {
  directory: 'a directory',
  template: 'a template file',
  file: 'a file',
  reference: 'a registry reference',
};

/** Reads what the argument names (see the module comment). */
export function loadInput(arg: string, options: LoadInputOptions = {}): Input {
  const onDisk = arg === STDIN ? undefined : kindOnDisk(arg);
  let input: Input;
  if (arg === STDIN) {
    // Standard input is a configuration (or documents) whose relative imports are found in the
    // current directory, as if it were a file there.
    const text = readStandardInput();
    input = {
      kind: 'file',
      arg,
      path: join(resolve(options.cwd ?? process.cwd()), '<stdin>'),
      text,
      configuration: { content: text, path: join(resolve(options.cwd ?? process.cwd()), '<stdin>') },
      name: 'stdin',
    };
  } else if (onDisk === 'directory') {
    input = { kind: 'directory', arg, path: arg, name: defaultInputName(arg, true) };
  } else if (onDisk === 'file') {
    const text = readTextFile(arg);
    if (TEMPLATE_FILE.test(arg)) {
      const type = basename(arg);
      const resource = options.deployment ?? type.replace(/\.[^.]*$/, '');
      input = {
        kind: 'template',
        arg,
        path: arg,
        text,
        configuration: { content: oneResourceConfiguration(resource, type), path: arg },
        deployment: resource,
        name: defaultInputName(arg, true),
      };
    } else {
      input = {
        kind: 'file',
        arg,
        path: arg,
        text,
        configuration: { content: text, path: arg },
        name: defaultInputName(arg, true),
      };
    }
  } else if (looksLikeReference(arg)) {
    const name = defaultInputName(arg, false);
    const resource =
      options.deployment ??
      (arg
        .replace(/[:?#].*$/, '')
        .split('/')
        .pop() ||
        'deployment');
    input = {
      kind: 'reference',
      arg,
      configuration: {
        content: oneResourceConfiguration(resource, arg),
        path: join(resolve(options.cwd ?? process.cwd()), `${resource}.yaml`),
      },
      deployment: resource,
      name,
    };
  } else {
    const near = nearbyFile(arg);
    throw new DmError('FILE_NOT_FOUND', `'${arg}' is neither a file nor a template reference`, {
      category: 'not-found',
      ...(near ? { hint: `did you mean ${near}?` } : {}),
    });
  }
  if (options.accept && !options.accept.includes(input.kind)) {
    throw new DmError(
      'INVALID_ARGUMENT',
      `${options.what ?? 'the argument'} '${arg}' is ${DESCRIBE[input.kind]}; this command takes ${options.accept
        .map((k) => DESCRIBE[k])
        .join(' or ')}`,
      { category: 'usage' },
    );
  }
  return input;
}
