/**
 * A registry server's resolution (client/src/wire/registry-api.ts) as the client's resolved
 * version: the one mapping, used by the client's ServerResolver and by the Deployment Manager's
 * CatalogResolver on the server (docs/server.md "HTTP API"). The template is the server's
 * canonical pin less its version, so it names the registry as the server stores it whatever the
 * case the reference was written in.
 */
import type { Resolution as ServerResolution } from '../wire/registry-api.js';
import type { ResolvedVersion } from './types.js';

export function resolvedFromServer(reference: string, r: ServerResolution): ResolvedVersion {
  return {
    reference,
    template: r.resolved.slice(0, r.resolved.lastIndexOf(':=')),
    version: r.version,
    commit: r.commit,
    kind: r.kind,
    templateFile: r.templateFile,
    schemaFile: r.schemaFile ?? undefined,
    digest: r.digest,
    files: r.files.map((f) => ({ path: f.path, sha256: f.sha256.replace(/^sha256:/, ''), size: f.size })),
  };
}
