/**
 * The git source (docs/server.md "Indexing"): a local repository or a remote URL, driven with the `git`
 * binary, always with argument arrays (never a shell). A remote is fetched shallowly into a cache
 * directory; the tree comes from `git ls-tree -r -l -z`, contents from one `git cat-file --batch`.
 * A snapshot of the commit already indexed is `unchanged`.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { DmError } from '../error.js';
import type { TreeEntry } from '../registry/types.js';
import { entriesUnder, type OpenOptions, type OpenResult, type Source } from './source.js';

const run = promisify(execFile);

export interface GitSourceOptions {
  /** A local repository path or a remote URL. */
  location: string;
  branch?: string | null;
  /** Registry root inside the repository. */
  path?: string;
  /** Where remote repositories are fetched to (required for URLs). */
  cacheDir?: string;
  /** Largest tree (entries) and blob accepted. */
  maxBlobBytes?: number;
}

/**
 * Whether `name` is a branch name git accepts (`git check-ref-format --branch` rules) that cannot
 * be read as an option: not empty, not `-…`, not `HEAD` or `@`, no component starting with `.` or
 * ending with `.lock`, no `..`, `@{`, `//`, control characters, space, `~^:?*[\`, no leading or
 * trailing `/`, no trailing `.`; at most 255 bytes.
 */
export function isValidBranchName(name: string): boolean {
  if (name === '' || name.startsWith('-') || name === 'HEAD' || name === '@') return false;
  if (Buffer.byteLength(name) > 255) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$|\.$/.test(name)) return false;
  return name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}

/**
 * Refuses source fields git could read as options (`--upload-pack=…`) or that are not what they
 * claim: the location and path must not start with `-`, the path must not contain `..`, the branch
 * must be a valid branch name. `field` names the field in the message.
 */
export function checkGitArguments(fields: {
  location?: string;
  branch?: string | null;
  path?: string;
}): void {
  const bad = (field: string, value: string, why: string) =>
    new DmError('INVALID_SOURCE', `${field} '${value.slice(0, 200)}' ${why}`, {
      category: 'invalid-input',
      details: { field },
    });
  if (fields.location !== undefined && /^\s*-/.test(fields.location)) {
    throw bad('source', fields.location, 'must not start with "-"');
  }
  if (fields.branch !== undefined && fields.branch !== null && !isValidBranchName(fields.branch)) {
    throw bad('branch', fields.branch, 'is not a valid git branch name (git check-ref-format --branch)');
  }
  if (fields.path !== undefined) {
    if (/^\s*-/.test(fields.path)) throw bad('path', fields.path, 'must not start with "-"');
    if (fields.path.split('/').includes('..')) throw bad('path', fields.path, "must not contain '..'");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    if (/[\x00-\x1f\x7f]/.test(fields.path))
      throw bad('path', fields.path, 'must not contain control characters');
  }
}

export function isRemoteGitLocation(location: string): boolean {
  return /^(https?|ssh|git|file):\/\//.test(location) || /^[\w.-]+@[\w.-]+:/.test(location);
}

async function git(args: string[], cwd?: string, maxBuffer = 256 * 1024 * 1024): Promise<Buffer> {
  try {
    const { stdout } = await run('git', args, {
      cwd,
      encoding: 'buffer',
      maxBuffer,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
    });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: Buffer; message: string };
    const detail = (e.stderr?.toString('utf8') ?? e.message).trim().split('\n').at(-1) ?? '';
    throw new DmError(
      'GIT_FAILED',
      `git ${args[0]} failed: ${detail.replace(/https?:\/\/[^@\s]*@/g, 'https://***@')}`,
      {
        category: 'unreachable',
      },
    );
  }
}

/** Reads blobs by id with one `git cat-file --batch` process. */
function catFiles(gitDir: string, shas: readonly string[]): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['--git-dir', gitDir, 'cat-file', '--batch'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new DmError('GIT_FAILED', `git cat-file failed: ${stderr.trim()}`, { category: 'error' }));
        return;
      }
      const out = Buffer.concat(chunks);
      const result = new Map<string, Buffer>();
      let pos = 0;
      while (pos < out.length) {
        const nl = out.indexOf(10, pos);
        if (nl < 0) break;
        const header = out.subarray(pos, nl).toString('utf8').split(' ');
        pos = nl + 1;
        if (header[1] === 'missing' || header.length < 3) continue;
        const size = Number(header[2]);
        result.set(header[0] ?? '', out.subarray(pos, pos + size));
        pos += size + 1;
      }
      resolve(result);
    });
    child.stdin.end(shas.map((s) => `${s}\n`).join(''));
  });
}

export class GitSource implements Source {
  readonly kind = 'git' as const;
  readonly description: string;
  private readonly remote: boolean;

  constructor(private readonly options: GitSourceOptions) {
    checkGitArguments({
      location: options.location,
      branch: options.branch ?? null,
      path: options.path ?? '',
    });
    this.remote = isRemoteGitLocation(options.location);
    this.description = `git ${options.location.replace(/\/\/[^@/]*@/, '//***@')}${options.branch ? `@${options.branch}` : ''}${
      options.path ? `/${options.path}` : ''
    }`;
    if (this.remote && !options.cacheDir) {
      throw new DmError('GIT_CACHE_REQUIRED', `a cache directory is needed to fetch ${this.description}`, {
        category: 'usage',
      });
    }
  }

  /** The git directory to read from; fetches a remote first. Returns it and the commit. */
  private async head(): Promise<{ gitDir: string; commit: string }> {
    const ref = this.options.branch ?? 'HEAD';
    if (this.remote) {
      const gitDir = this.options.cacheDir!;
      if (!existsSync(`${gitDir}/HEAD`)) {
        mkdirSync(gitDir, { recursive: true });
        await git(['init', '--bare', '--quiet', '--', gitDir]);
      }
      await git([
        '--git-dir',
        gitDir,
        'fetch',
        '--quiet',
        '--depth=1',
        '--no-tags',
        '--',
        this.options.location,
        ref,
      ]);
      const commit = (await git(['--git-dir', gitDir, 'rev-parse', '--verify', 'FETCH_HEAD^{commit}']))
        .toString()
        .trim();
      return { gitDir, commit };
    }
    if (!existsSync(this.options.location)) {
      throw new DmError('SOURCE_NOT_FOUND', `no git repository at ${this.options.location}`, {
        category: 'not-found',
      });
    }
    const gitDir = (await git(['-C', this.options.location, 'rev-parse', '--absolute-git-dir']))
      .toString()
      .trim();
    const commit = (
      await git(['--git-dir', gitDir, 'rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`])
    )
      .toString()
      .trim();
    return { gitDir, commit };
  }

  async open(options: OpenOptions): Promise<OpenResult> {
    const { gitDir, commit } = await this.head();
    options.meter.requests++;
    if (commit === options.commit) return { status: 'unchanged', commit };
    const listing = await git([
      '--git-dir',
      gitDir,
      'ls-tree',
      '-r',
      '-t',
      '-l',
      '-z',
      '--full-tree',
      '--end-of-options',
      commit,
    ]);
    const all: TreeEntry[] = [];
    for (const record of listing.toString('utf8').split('\0')) {
      if (!record) continue;
      const tab = record.indexOf('\t');
      const [, type, sha, size] = record.slice(0, tab).split(/ +/);
      const path = record.slice(tab + 1);
      if (type === 'blob')
        all.push({ path, type: 'blob', size: Number(size), ...(sha ? { gitSha: sha } : {}) });
      else if (type === 'tree') all.push({ path, type: 'tree', ...(sha ? { gitSha: sha } : {}) });
    }
    const entries = entriesUnder(all, this.options.path ?? '');
    const read = async (wanted: readonly TreeEntry[]): Promise<Map<string, Buffer>> => {
      const shas = [...new Set(wanted.flatMap((e) => (e.gitSha ? [e.gitSha] : [])))];
      const blobs = shas.length ? await catFiles(gitDir, shas) : new Map<string, Buffer>();
      const out = new Map<string, Buffer>();
      for (const e of wanted) {
        const content = e.gitSha ? blobs.get(e.gitSha) : undefined;
        if (content) out.set(e.path, content);
      }
      return out;
    };
    return { status: 'changed', commit, etag: null, entries, read };
  }
}
