import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isDmError } from '../error.js';
import { openStateDatabase } from './database.js';
import { DeploymentStore, type NewManifest } from './deployments-store.js';

function manifest(overrides: Partial<NewManifest> = {}): NewManifest {
  return {
    deployment: 'web',
    action: 'create',
    inputConfig: { config: 'resources: []', imports: [] },
    expandedConfig: { resources: [] },
    layout: { resources: [] },
    references: [],
    target: { namespace: 'default' },
    resources: [
      {
        action: 'apply',
        name: 'cm',
        type: 'ConfigMap',
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'default',
        objectName: 'cm',
        level: 1,
      },
    ],
    instances: [{ name: 'cm', type: 'ConfigMap', path: '$.resources[0]' }],
    lockOwner: '1@a',
    isAlive: () => true,
    ...overrides,
  };
}

describe('DeploymentStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-state-'));
  const file = join(dir, 'deployments.db');

  it('migrates at open and records a manifest with its resources and instances', async () => {
    const store = new DeploymentStore(openStateDatabase(file));
    const m = await store.beginManifest(manifest());
    assert.equal(m.name, 'web-1');
    await store.recordOutcomes('web-1', [{ action: 'apply', name: 'cm', outcome: 'applied' }]);
    await store.finishManifest('web-1', 'applied');
    assert.equal((await store.getDeployment('web'))!.state, 'deployed');
    assert.equal((await store.manifestResources('web-1'))[0]!.outcome, 'applied');
    assert.deepEqual(await store.listTypes(), [{ type: 'ConfigMap', instances: 1 }]);
    await store.database.close();
  });

  it('refuses a second live process on the same deployment and takes over a dead one', async () => {
    const store = new DeploymentStore(openStateDatabase(file));
    await store.beginManifest(manifest({ action: 'update', lockOwner: '2@a' }));
    await assert.rejects(
      () => store.beginManifest(manifest({ action: 'update', lockOwner: '3@a', isAlive: () => true })),
      (e: unknown) => isDmError(e) && e.code === 'DEPLOYMENT_BUSY' && e.category === 'conflict',
    );
    const taken = await store.beginManifest(
      manifest({ action: 'update', lockOwner: '3@a', isAlive: () => false }),
    );
    assert.equal(taken.name, 'web-3');
    assert.equal((await store.getManifest('web-2'))!.status, 'applying');
    await store.finishManifest('web-3', 'failed', 'boom');
    assert.equal((await store.getDeployment('web'))!.state, 'failed');
    assert.equal((await store.getDeployment('web'))!.lastGoodManifest, 'web-1');
    await store.database.close();
  });

  it('a finished delete removes the deployment and its instances but keeps the manifests', async () => {
    const store = new DeploymentStore(openStateDatabase(file));
    await store.beginManifest(manifest({ action: 'delete', resources: [], instances: [] }));
    await store.finishManifest('web-4', 'applied');
    assert.equal(await store.getDeployment('web'), undefined);
    assert.deepEqual(await store.listInstances('all'), []);
    assert.deepEqual(
      (await store.listManifests('web')).map((m) => m.action),
      ['create', 'update', 'update', 'delete'],
    );
    await store.database.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
