/**
 * Resolution against a registry snapshot: a scanned tree at one commit plus a way to read files.
 * Local directories, git repositories and GitHub all come down to this; the patch float,
 * the digests and the not-found errors are therefore identical whatever the source.
 */
import { DmError } from '../error.js';
import { pickLatest, pickVersion } from '../reference/pick-version.js';
import {
  formatReference,
  formatTemplateName,
  type RegistryName,
  type RegistryReference,
} from '../reference/reference.js';
import { digestVersion, versionDigest } from '../registry/digest.js';
import type { ScannedVersion, ScanResult } from '../registry/types.js';
import type { Resolution, Resolver } from './resolver.js';
import type { ResolvedFile, ResolvedVersion } from './types.js';

export interface RegistrySnapshot {
  /** The commit (or '' for a plain directory). */
  commit: string;
  scan: ScanResult;
  /** Reads a file by its path from the repository root. */
  read(repoPath: string): Promise<Uint8Array>;
}

export interface SnapshotResolverOptions {
  name: string;
  /** The registry this source serves, e.g. github.com/dm-samples/templates. */
  registry: RegistryName;
  /** Loads the snapshot (once; cached for the resolver's life). */
  load: () => Promise<RegistrySnapshot>;
}

function sameRegistry(a: RegistryName, b: RegistryName): boolean {
  return (
    a.host.toLowerCase() === b.host.toLowerCase() &&
    a.owner.toLowerCase() === b.owner.toLowerCase() &&
    a.repo.toLowerCase() === b.repo.toLowerCase()
  );
}

export class SnapshotResolver implements Resolver {
  readonly name: string;
  readonly registry: RegistryName;
  private readonly load: () => Promise<RegistrySnapshot>;
  private snapshot: Promise<RegistrySnapshot> | undefined;
  private readonly digests = new Map<string, Promise<ResolvedFile[]>>();

  constructor(options: SnapshotResolverOptions) {
    this.name = options.name;
    this.registry = options.registry;
    this.load = options.load;
  }

  private getSnapshot(): Promise<RegistrySnapshot> {
    this.snapshot ??= this.load();
    return this.snapshot;
  }

  private versionsOf(snapshot: RegistrySnapshot, ref: RegistryReference): ScannedVersion[] {
    return snapshot.scan.versions.filter(
      (v) => v.collection === ref.collection && v.template === ref.template,
    );
  }

  async versions(template: RegistryReference): Promise<string[] | null> {
    if (!sameRegistry(template, this.registry)) return null;
    const snapshot = await this.getSnapshot();
    return this.versionsOf(snapshot, template).map((v) => v.version);
  }

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    const out: Resolution[] = [];
    for (const ref of refs) {
      if (!sameRegistry(ref, this.registry)) {
        out.push(null);
        continue;
      }
      try {
        out.push(await this.resolveOne(ref));
      } catch (error) {
        if (error instanceof DmError) out.push(error);
        else throw error;
      }
    }
    return out;
  }

  private async resolveOne(ref: RegistryReference): Promise<ResolvedVersion> {
    const snapshot = await this.getSnapshot();
    const versions = this.versionsOf(snapshot, ref);
    const templateName = formatTemplateName({
      ...this.registry,
      collection: ref.collection,
      template: ref.template,
    });
    if (versions.length === 0) {
      const skipped = snapshot.scan.findings.filter(
        (f) => f.severity === 'error' && f.path.includes(`${ref.template}/`),
      );
      throw new DmError('TEMPLATE_NOT_FOUND', `${templateName} does not exist in ${this.name}`, {
        category: 'not-found',
        details: { reference: formatReference(ref), skipped: skipped.map((f) => `${f.code} ${f.path}`) },
        ...(skipped.length
          ? { hint: `some versions were skipped by lint: ${skipped[0]!.code} at ${skipped[0]!.path}` }
          : {}),
      });
    }
    const names = versions.map((v) => v.version);
    const picked = ref.version
      ? pickVersion(names, ref.version, { subject: templateName })
      : pickLatest(names, { subject: templateName });
    const version = versions.find((v) => v.version === picked)!;
    const key = `${snapshot.commit}\0${version.dir}`;
    let files = this.digests.get(key);
    if (!files) {
      files = digestVersion(version, (p) => snapshot.read(p)).then((d) =>
        d.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
      );
      this.digests.set(key, files);
    }
    const resolvedFiles = await files;
    return {
      reference: formatReference(ref),
      template: templateName,
      version: version.version,
      commit: snapshot.commit,
      kind: version.kind,
      templateFile: version.templateFile,
      schemaFile: version.schemaFile,
      files: resolvedFiles,
      digest: versionDigest(resolvedFiles),
    };
  }

  async fetchFile(resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null> {
    const snapshot = await this.getSnapshot();
    if (!resolved.template.startsWith(`${this.registry.host}/${this.registry.owner}/${this.registry.repo}/`))
      return null;
    const version = snapshot.scan.versions.find(
      (v) =>
        formatTemplateName({ ...this.registry, collection: v.collection, template: v.template }) ===
          resolved.template && v.version === resolved.version,
    );
    const entry = version?.files.find((f) => f.path === file.path);
    if (!entry) return null;
    return Buffer.from(await snapshot.read(entry.repoPath));
  }
}
