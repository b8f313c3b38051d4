/**
 * Registry references in configurations sent to the Deployment Manager service are resolved from
 * the registries this server serves (docs/manager.md): a Resolver (the client's resolver-chain
 * seam) over a narrow view of the server's catalog, so expansion on the server uses the same
 * RegistryTemplateSource as `dm deploy`.
 */
import { DmError } from '../../../client/src/error.js';
import { formatReference, type RegistryReference } from '../../../client/src/reference/index.js';
import type {
  Resolution,
  ResolvedFile,
  ResolvedVersion,
  Resolver,
} from '../../../client/src/resolve/index.js';
import { resolvedFromServer } from '../../../client/src/resolve/index.js';
import type { Resolution as ServerResolution } from '../api/shapes.js';

/** What the manager needs of the server's catalog: resolve a reference, read a file's bytes. */
export interface CatalogView {
  /** Resolves as `GET /api/v1/resolve` does for this caller; throws DmError when it cannot. */
  resolve(reference: string): Promise<ServerResolution>;
  /** The stored bytes of a file by sha256 (hex), or undefined. */
  fileContent(sha256: string): Promise<Buffer | undefined>;
}

export class CatalogResolver implements Resolver {
  readonly name = 'this registry server';

  constructor(private readonly catalog: CatalogView) {}

  async resolve(refs: readonly RegistryReference[]): Promise<Resolution[]> {
    const out: Resolution[] = [];
    for (const ref of refs) {
      try {
        const r = await this.catalog.resolve(formatReference(ref));
        out.push(resolvedFromServer(r.reference, r));
      } catch (error) {
        if (error instanceof DmError) out.push(error);
        else throw error;
      }
    }
    return out;
  }

  async fetchFile(_resolved: ResolvedVersion, file: ResolvedFile): Promise<Buffer | null> {
    return (await this.catalog.fileContent(file.sha256.replace(/^sha256:/, ''))) ?? null;
  }
}
