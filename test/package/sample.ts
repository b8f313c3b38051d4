/**
 * What the package and image tests serve: a registry on disk outside the repository (the sample's
 * name and its redis template), and the answers a running dm-registry must give for it.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/run-cli.js';

/** Copies the sample registry's registry.yaml and its redis template to `dir`. */
export function sampleRegistry(dir: string): string {
  cpSync(join(repoRoot, 'registry-fixtures', 'registry.yaml'), join(dir, 'registry.yaml'));
  cpSync(join(repoRoot, 'registry-fixtures', 'redis'), join(dir, 'redis'), { recursive: true });
  return dir;
}

/** /readyz is 200, a search finds redis, and redis:v1.0 resolves to v1.0.3 (the patch float). */
export async function assertServesSample(url: string): Promise<void> {
  const ready = await fetch(`${url}/readyz`);
  assert.equal(ready.status, 200, await ready.text());
  const search = await fetch(`${url}/api/v1/search?q=redis`);
  assert.equal(search.status, 200);
  assert.match(await search.text(), /github\.com\/dm-samples\/templates\/redis/);
  const resolved = await fetch(`${url}/api/v1/resolve?ref=github.com/dm-samples/templates/redis:v1.0`);
  const body = await resolved.text();
  assert.equal(resolved.status, 200, body);
  assert.match(body, /v1\.0\.3/);
}
