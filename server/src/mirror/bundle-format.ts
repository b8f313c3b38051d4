/**
 * Air-gap bundles (docs/mirroring.md): one `.tar.gz` holding `manifest.json`, optionally
 * `manifest.sig` (Ed25519 over the manifest's bytes), and `blobs/<sha256>` for every file content
 * the bundle carries, each stored once. The manifest lists every version (canonical reference,
 * files with sha256 and size, version digest, source registry and commit, first-seen time), the
 * registries they belong to, search data, the blobs, and the bundle's own digest (sha256 over the
 * manifest without its `digest` field). A delta bundle (`since`) carries only what its base lacks:
 * versions may then name blobs the base carried.
 *
 * Reading is verification: nothing is returned until every blob's name, size and sha256, every
 * version digest, the manifest digest and (when a key is given) the signature have been checked.
 * Sizes are bounded while streaming (the manifest, each blob, the total).
 */
import { createHash, type KeyObject } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { Header } from 'tar';
import { DmError } from '../../../client/src/error.js';
import {
  generateEd25519Pem,
  parseEd25519Pem,
  signBytes,
  verifyBytes,
} from '../../../client/src/integrity/index.js';
import {
  pathProblem,
  printable,
  registryNameProblem,
  sha256Hex,
  versionDigest,
  versionNameProblem,
} from '../../../client/src/registry/index.js';
import type { AddedVersion, ExportedTemplate } from '../store/contract.js';
import { TarWalker } from './bundle-tar.js';

export const BUNDLE_FORMAT = 'dm-bundle/v1';

/** A version as added to a store (add-versions.ts), with where it came from. */
export interface BundleVersion extends AddedVersion {
  /** The exact pin: `github.com/o/r/redis:=v1.0.3`. */
  reference: string;
  registry: string;
  /** The commit of the source registry the version was indexed from. */
  commit: string | null;
  /** When the exporting server first saw this version (ISO 8601). */
  firstSeen: string | null;
}

export interface BundleRegistry {
  name: string;
  visibility: 'public' | 'private';
  /** Where the exporting server indexed it from (never with credentials). */
  source: string;
  commit: string | null;
}

/** A template's search data. */
export type BundleTemplate = ExportedTemplate;

export interface BundleManifest {
  format: typeof BUNDLE_FORMAT;
  createdAt: string;
  /** The digest of the bundle this one is a delta of, or null for a full bundle. */
  since: string | null;
  registries: BundleRegistry[];
  templates: BundleTemplate[];
  versions: BundleVersion[];
  blobs: { sha256: string; size: number }[];
  /** sha256 over this manifest's JSON without `digest`. */
  digest: string;
}

export interface BundleLimits {
  /** Largest manifest, bytes (default 256 MiB). */
  maxManifestBytes?: number;
  /** Largest blob, bytes (default 64 MiB). */
  maxBlobBytes?: number;
  /** Largest sum of blob sizes, bytes (default 2 GiB). */
  maxTotalBytes?: number;
}

function bundleError(
  file: string,
  message: string,
  code: 'INVALID_BUNDLE' | 'BUNDLE_SIGNATURE' = 'INVALID_BUNDLE',
): DmError {
  return new DmError(code, `${file}: ${message}`, { details: { file } });
}

export function manifestDigest(manifest: Omit<BundleManifest, 'digest'> & { digest?: string }): string {
  const { digest: _ignored, ...rest } = manifest;
  return `sha256:${createHash('sha256').update(JSON.stringify(rest)).digest('hex')}`;
}

/**
 * Whether a manifest read from `bytes` carries its own digest. writeBundle puts `digest` last, so
 * the bytes before `,"digest":"…"}`, closed with `}`, are the very JSON the digest is over: hashing
 * them spares serialising the whole manifest again (a tenth of verifying the 10,000-version bundle
 * of bench/mirror.ts). A manifest laid out otherwise is checked by serialising it.
 */
function digestHolds(bytes: Buffer, manifest: BundleManifest): boolean {
  const tail = Buffer.from(`,"digest":${JSON.stringify(manifest.digest)}}`);
  const body = bytes.length - tail.length;
  if (body > 0 && bytes.subarray(body).equals(tail)) {
    const hex = createHash('sha256').update(bytes.subarray(0, body)).update('}').digest('hex');
    if (`sha256:${hex}` === manifest.digest) return true;
  }
  return manifestDigest(manifest) === manifest.digest;
}

// ---- keys -------------------------------------------------------------------------------------

/** Writes an Ed25519 key pair: `<file>` (PKCS#8 PEM, mode 0600) and `<file>.pub` (SPKI PEM). */
export async function generateBundleKey(file: string): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey: priv, publicKey: pub } = generateEd25519Pem();
  await writeFile(file, priv, { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') {
      throw new DmError('FILE_EXISTS', `${file} already exists; keygen never overwrites a key`, {
        category: 'conflict',
      });
    }
    throw error;
  });
  await writeFile(`${file}.pub`, pub, { mode: 0o644 });
  return { privateKey: file, publicKey: `${file}.pub` };
}

async function readKey(file: string, kind: 'private' | 'public'): Promise<KeyObject> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DmError(
      code === 'ENOENT' ? 'FILE_NOT_FOUND' : 'FILE_UNREADABLE',
      `${file}: ${code === 'ENOENT' ? 'no such key file' : `cannot read (${code})`}`,
    );
  }
  const key = parseEd25519Pem(text, kind);
  if (key === undefined) {
    throw new DmError(
      'INVALID_KEY',
      `${file} is not an Ed25519 ${kind} key in PEM form (make one with dm-registry bundle keygen)`,
      {
        category: 'invalid-input',
      },
    );
  }
  return key;
}

export const readSigningKey = (file: string) => readKey(file, 'private');
export const readVerifyKey = (file: string) => readKey(file, 'public');

// ---- writing ----------------------------------------------------------------------------------

function tarHeader(path: string, size: number): Buffer {
  const block = Buffer.alloc(512);
  new Header({ path, mode: 0o644, size, mtime: new Date(0), type: 'File', uid: 0, gid: 0 }).encode(block, 0);
  return block;
}

function padding(size: number): Buffer {
  return Buffer.alloc((512 - (size % 512)) % 512);
}

/**
 * Writes a bundle atomically (a temporary file renamed into place). `readBlob` supplies the
 * content of every blob the manifest lists. Returns the manifest as written and the file's size.
 */
export async function writeBundle(
  out: string,
  content: Omit<BundleManifest, 'digest' | 'format'>,
  readBlob: (sha256: string) => Buffer | Promise<Buffer>,
  options: { signingKey?: KeyObject } = {},
): Promise<{ manifest: BundleManifest; bytes: number }> {
  const unsigned = { format: BUNDLE_FORMAT, ...content } as Omit<BundleManifest, 'digest'>;
  const manifest: BundleManifest = { ...unsigned, digest: manifestDigest(unsigned) };
  const manifestBytes = Buffer.from(JSON.stringify(manifest));
  const tmp = `${out}.tmp-${process.pid}`;
  async function* entries(): AsyncGenerator<Buffer> {
    yield tarHeader('manifest.json', manifestBytes.length);
    yield manifestBytes;
    yield padding(manifestBytes.length);
    if (options.signingKey) {
      const signature = Buffer.from(
        `${signBytes({ privateKey: options.signingKey }, manifestBytes).toString('base64')}\n`,
      );
      yield tarHeader('manifest.sig', signature.length);
      yield signature;
      yield padding(signature.length);
    }
    for (const blob of manifest.blobs) {
      const bytes = await readBlob(blob.sha256);
      if (bytes.length !== blob.size) {
        throw new DmError(
          'STORE_INCONSISTENT',
          `blob ${blob.sha256} has ${bytes.length} bytes, the store says ${blob.size}`,
        );
      }
      yield tarHeader(`blobs/${blob.sha256}`, bytes.length);
      yield bytes;
      yield padding(bytes.length);
    }
    yield Buffer.alloc(1024);
  }
  try {
    await pipeline(
      Readable.from(entries()),
      createGzip({ level: 6 }),
      createWriteStream(tmp, { mode: 0o644 }),
    );
    await rename(tmp, out);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  const { size } = await stat(out);
  return { manifest, bytes: size };
}

// ---- reading ----------------------------------------------------------------------------------

export interface VerifiedBundle {
  manifest: BundleManifest;
  /** Blob contents the bundle carries, verified. */
  blobs: Map<string, Buffer>;
  /** Blobs its versions name that it does not carry (a delta): the importer must already have them. */
  external: string[];
  signed: boolean;
  /** Bytes of content read. */
  contentBytes: number;
}

const SHA = /^[0-9a-f]{64}$/;

function checkManifestShape(value: unknown, file: string): BundleManifest {
  const m = value as Partial<BundleManifest> | null;
  if (!m || typeof m !== 'object' || m.format !== BUNDLE_FORMAT) {
    throw bundleError(file, `manifest.json is not a ${BUNDLE_FORMAT} manifest`);
  }
  if (
    !Array.isArray(m.versions) ||
    !Array.isArray(m.blobs) ||
    !Array.isArray(m.registries) ||
    !Array.isArray(m.templates)
  ) {
    throw bundleError(file, 'manifest.json lacks versions, blobs, registries or templates');
  }
  for (const b of m.blobs) {
    if (!b || !SHA.test(String(b.sha256)) || !Number.isSafeInteger(b.size) || b.size < 0) {
      throw bundleError(file, `manifest.json lists a malformed blob ${JSON.stringify(b).slice(0, 100)}`);
    }
  }
  const created = typeof m.createdAt === 'string' ? Date.parse(m.createdAt) : Number.NaN;
  if (Number.isNaN(created)) throw bundleError(file, 'manifest.json has no valid createdAt time');
  for (const r of m.registries) {
    const problem = registryNameProblem(r?.name);
    if (problem) throw bundleError(file, `registry '${shown(r?.name)}' cannot be imported: ${problem}`);
  }
  for (const v of m.versions) {
    if (!v || typeof v.reference !== 'string' || !Array.isArray(v.files) || typeof v.digest !== 'string') {
      throw bundleError(file, `manifest.json lists a malformed version ${JSON.stringify(v).slice(0, 100)}`);
    }
    checkVersionNames(v, file);
    // A first-seen time is when the exporting server first saw the version: never after it wrote
    // the bundle (docs/mirroring.md, "Bundles").
    if (v.firstSeen !== null && v.firstSeen !== undefined) {
      const seen = typeof v.firstSeen === 'string' ? Date.parse(v.firstSeen) : Number.NaN;
      if (Number.isNaN(seen)) throw bundleError(file, `${v.reference}: firstSeen is not a time`);
      if (seen > created) {
        throw bundleError(
          file,
          `${v.reference}: firstSeen ${v.firstSeen} is later than the bundle (${m.createdAt})`,
        );
      }
    }
  }
  return m as BundleManifest;
}

/** A value of a manifest as an error message shows it: escaped and cut short. */
function shown(value: unknown): string {
  return printable(String(value).slice(0, 200));
}

/**
 * A version's names and paths, by the rule every way content enters is held to
 * (client/src/registry/content-names.ts): the registry name, collection, template and version as
 * the scanner accepts them, the reference they make, and every path (the directory, each file,
 * the template and schema files, which must be among the files).
 */
function checkVersionNames(v: BundleVersion, file: string): void {
  const where = shown(v.reference);
  const fail = (why: string): never => {
    throw bundleError(file, `${where} cannot be imported: ${why}`);
  };
  const registry = registryNameProblem(v.registry);
  if (registry) fail(`registry '${shown(v.registry)}': ${registry}`);
  const names = versionNameProblem(v);
  if (names) fail(names);
  const reference = `${[v.registry, v.collection, v.template].filter(Boolean).join('/')}:=${v.version}`;
  if (v.reference !== reference) fail(`its reference should be ${shown(reference)}`);
  const dir = pathProblem(v.dir);
  if (dir) fail(`its directory '${shown(v.dir)}' is not a path inside a registry: ${dir}`);
  const paths = new Set<string>();
  for (const f of v.files) {
    const problem = pathProblem(f?.path);
    if (problem) fail(`file '${shown(f?.path)}' is not a path inside a version: ${problem}`);
    if (paths.has(f.path)) fail(`file '${shown(f.path)}' is listed twice`);
    paths.add(f.path);
  }
  if (!paths.has(v.templateFile)) fail(`its template file '${shown(v.templateFile)}' is not among its files`);
  if (v.schemaFile !== null && !paths.has(v.schemaFile)) {
    fail(`its schema file '${shown(v.schemaFile)}' is not among its files`);
  }
}

interface CheckedManifest {
  manifest: BundleManifest;
  /** Blob sizes by sha256, as the manifest lists them. */
  listed: Map<string, number>;
  /** Content its versions name that it does not carry (sorted). */
  external: string[];
}

/**
 * Everything that can be checked of a manifest on its own: JSON, shape, its digest, and every
 * version (files named by well-formed sha256s, sizes as the blobs listed, version digests).
 */
function checkManifest(bytes: Buffer, file: string): CheckedManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw bundleError(file, 'manifest.json is not valid JSON');
  }
  const manifest = checkManifestShape(parsed, file);
  if (!digestHolds(bytes, manifest)) {
    throw bundleError(
      file,
      `manifest.json was altered: its digest is ${manifestDigest(manifest)}, it says ${manifest.digest}`,
    );
  }
  const listed = new Map(manifest.blobs.map((b) => [b.sha256, b.size]));
  const external = new Set<string>();
  for (const v of manifest.versions) {
    for (const f of v.files) {
      const size = listed.get(f.sha256);
      if (size === undefined) {
        // A listed blob's name was checked with the manifest's shape.
        if (!SHA.test(f.sha256))
          throw bundleError(file, `${v.reference}: file ${f.path} has a malformed sha256`);
        if (manifest.since === null)
          throw bundleError(file, `${v.reference}: file ${f.path} has no blob in the bundle`);
        external.add(f.sha256);
      } else if (size !== f.size) {
        throw bundleError(file, `${v.reference}: file ${f.path} is ${f.size} bytes, its blob ${size}`);
      }
    }
    let digest: string;
    try {
      digest = versionDigest(v.files);
    } catch (error) {
      throw bundleError(file, `${v.reference}: ${(error as Error).message}`);
    }
    if (digest !== v.digest)
      throw bundleError(file, `${v.reference}: version digest is ${digest}, the manifest says ${v.digest}`);
  }
  return { manifest, listed, external: [...external].sort() };
}

const READ_CHUNK = 1024 * 1024;

/** Reads and verifies a bundle completely; throws `INVALID_BUNDLE`/`BUNDLE_SIGNATURE` naming the problem. */
export async function readBundle(
  file: string,
  options: BundleLimits & { verifyKey?: KeyObject } = {},
): Promise<VerifiedBundle> {
  const maxManifest = options.maxManifestBytes ?? 256 * 1024 * 1024;
  const maxBlob = options.maxBlobBytes ?? 64 * 1024 * 1024;
  const maxTotal = options.maxTotalBytes ?? 2 * 1024 * 1024 * 1024;
  let manifestBytes: Buffer | undefined;
  let signature: Buffer | undefined;
  const blobs = new Map<string, Buffer>();
  let total = 0;
  // The first problem is the one reported: the pipeline then fails with an abort of its own.
  let failure: DmError | undefined;
  let checked: CheckedManifest | undefined;
  const fail: (message: string) => never = (message) => {
    failure ??= bundleError(file, message);
    throw failure;
  };

  const walker = new TarWalker(
    (entry) => {
      const { path, size } = entry;
      if (entry.type !== 'File' && entry.type !== 'OldFile') fail(`unexpected ${entry.type} entry ${path}`);
      let limit: number;
      let onDone: (content: Buffer) => void;
      if (path === 'manifest.json') {
        if (manifestBytes) fail('manifest.json appears twice');
        limit = maxManifest;
        // Checked as soon as it arrives (writeBundle puts it first): an altered manifest is refused
        // before the content is read.
        onDone = (c) => {
          manifestBytes = c;
          try {
            checked = checkManifest(c, file);
          } catch (error) {
            failure ??= error as DmError;
            throw error;
          }
        };
      } else if (path === 'manifest.sig') {
        limit = 4096;
        onDone = (c) => {
          signature = c;
        };
      } else if (path.length === 70 && path.startsWith('blobs/') && SHA.test(path.slice(6))) {
        const sha = path.slice(6);
        if (blobs.has(sha)) fail(`blob ${sha} appears twice`);
        limit = maxBlob;
        total += size;
        if (total > maxTotal) fail(`its content is larger than ${maxTotal} bytes, the most one import takes`);
        // Hashed once, here: the version digests are computed from these names.
        onDone = (c) => {
          const actual = sha256Hex(c);
          if (actual !== sha) fail(`blob ${sha} has sha256 ${actual}: its content was altered`);
          blobs.set(sha, c);
        };
      } else {
        fail(`unexpected entry ${path}`);
      }
      if (size > limit) fail(`${path} is ${size} bytes, more than ${limit}`);
      const parts: Buffer[] = [];
      return {
        data: (part) => parts.push(part),
        // One part (the usual case: the entry lies within one gunzipped chunk) is kept as it is.
        end: () => onDone(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)),
      };
    },
    (message) => fail(message),
  );
  try {
    // Gunzip runs on libuv's thread pool while this thread walks the tar and hashes the chunk
    // before: on two cores the two overlap. Chunks of 1 MiB: fewer hand-overs between the two and
    // most entries lie within one chunk (no copy); 64 KiB, 256 KiB, 1 MiB and 4 MiB chunks took
    // 736, 545, 500 and 524 ms median side by side (docs/mirroring.md).
    await pipeline(
      createReadStream(file, { highWaterMark: READ_CHUNK }),
      createGunzip({ chunkSize: READ_CHUNK }),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) walker.write(chunk);
        walker.end();
      },
    );
  } catch (error) {
    if (failure) throw failure;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new DmError('FILE_NOT_FOUND', `${file}: no such bundle`, { category: 'not-found' });
    if (code === 'EISDIR')
      throw new DmError('INVALID_BUNDLE', `${file} is a directory, not a bundle`, {
        category: 'invalid-input',
      });
    throw bundleError(file, `the archive is truncated or corrupt (${code ?? (error as Error).message})`);
  }
  if (!checked) throw bundleError(file, 'there is no manifest.json');
  const { manifest, listed, external } = checked;
  if (options.verifyKey) {
    if (!signature)
      throw bundleError(file, 'it is not signed, and --verify-key asks for a signature', 'BUNDLE_SIGNATURE');
    const ok = verifyBytes(
      { publicKey: options.verifyKey },
      manifestBytes!,
      Buffer.from(signature.toString('utf8').trim(), 'base64'),
    );
    if (!ok) throw bundleError(file, 'its signature does not verify with the given key', 'BUNDLE_SIGNATURE');
  }
  for (const [sha, size] of listed) {
    const content = blobs.get(sha);
    if (!content) throw bundleError(file, `blob ${sha} is listed but missing`);
    if (content.length !== size)
      throw bundleError(file, `blob ${sha} has ${content.length} bytes, the manifest says ${size}`);
  }
  for (const sha of blobs.keys()) {
    if (!listed.has(sha)) throw bundleError(file, `blob ${sha} is not listed in the manifest`);
  }
  return {
    manifest,
    blobs,
    external,
    signed: signature !== undefined,
    contentBytes: total,
  };
}
