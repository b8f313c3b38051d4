/**
 * Checking a version's content against what its origin said of it (docs/mirroring.md): the exact
 * file list (no file missing, none extra), every file's sha256 and size, and the version digest
 * recomputed from them. A mirror pulling a version through and a bundle import both use it, before
 * anything is written.
 */
import { DmError } from '../../../client/src/error.js';
import { sha256Hex, versionDigest } from '../../../client/src/registry/index.js';

export interface ExpectedVersion {
  /** For messages: the exact pin, `github.com/o/r/redis:=v1.0.3`. */
  resolved: string;
  digest: string;
  files: readonly { path: string; sha256: string; size: number }[];
}

export interface VerifiedFile {
  path: string;
  sha256: string;
  size: number;
  content: Buffer;
}

function mismatch(expected: ExpectedVersion, what: string, where: string): DmError {
  return new DmError('CONTENT_MISMATCH', `${where}: ${expected.resolved} ${what}`, {
    category: 'invalid-input',
    details: { reference: expected.resolved, digest: expected.digest },
  });
}

/**
 * Verifies `files` (path → bytes) against `expected`; returns the files in the expected order with
 * their digests. `where` names the content's origin for the message (an upstream, a bundle file).
 */
export function verifyVersionContent(
  expected: ExpectedVersion,
  files: ReadonlyMap<string, Buffer>,
  where: string,
): VerifiedFile[] {
  const out: VerifiedFile[] = [];
  for (const f of expected.files) {
    const content = files.get(f.path);
    if (content === undefined) throw mismatch(expected, `lacks the file ${f.path}`, where);
    if (content.length !== f.size) {
      throw mismatch(expected, `file ${f.path} has ${content.length} bytes, expected ${f.size}`, where);
    }
    const sha256 = sha256Hex(content);
    if (sha256 !== f.sha256) {
      throw mismatch(expected, `file ${f.path} has sha256 ${sha256}, expected ${f.sha256}`, where);
    }
    out.push({ path: f.path, sha256, size: content.length, content });
  }
  if (files.size !== expected.files.length) {
    const known = new Set(expected.files.map((f) => f.path));
    const extra = [...files.keys()].filter((p) => !known.has(p)).sort();
    throw mismatch(expected, `has a file its origin does not list: ${extra[0]}`, where);
  }
  const digest = versionDigest(out);
  if (digest !== expected.digest) {
    throw mismatch(expected, `has version digest ${digest}, expected ${expected.digest}`, where);
  }
  return out;
}
