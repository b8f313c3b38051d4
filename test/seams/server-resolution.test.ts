/**
 * One mapping from a registry server's resolution to the client's resolved version
 * (client/src/resolve/server-resolution.ts), for `dm --registry-url` and for the Deployment
 * Manager on the server: the template is the registry's own name, whatever the case the
 * reference was written in, and its files are then fetched under that name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseReference, type RegistryReference } from '../../client/src/reference/reference.js';
import { ServerResolver } from '../../client/src/resolve/server-resolver.js';
import type { ResolvedVersion } from '../../client/src/resolve/types.js';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';

describe('a server resolution as the client sees it', () => {
  let registry: RunningRegistry;
  before(async () => {
    registry = await startRegistry(['registry-fixtures=github.com/acme/templates']);
  });
  after(async () => {
    await registry?.stop();
  });

  it('a reference written with another case resolves to the registry’s own template name', async () => {
    const resolver = new ServerResolver({ url: registry.url });
    const ref = parseReference('github.com/ACME/Templates/redis:v1.0') as RegistryReference;
    const [answer] = await resolver.resolve([ref]);
    assert.ok(answer && !(answer instanceof Error), String(answer));
    const resolved = answer as ResolvedVersion;
    assert.equal(resolved.template, 'github.com/acme/templates/redis');
    assert.match(resolved.version, /^v1\.0\.\d+$/);
    const file = resolved.files.find((f) => f.path === resolved.templateFile);
    assert.ok(file, `no ${resolved.templateFile} among ${resolved.files.map((f) => f.path).join(', ')}`);
    const bytes = await resolver.fetchFile(resolved, file);
    assert.ok(bytes && bytes.length === file.size, 'the template file is fetched under the canonical name');
  });
});
