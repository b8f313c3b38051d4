/**
 * One `$(ref…)` parser (client/src/expand/value-references.ts): `dm expand` and `dm deploy
 * --dry-run` accept and reject the same references, with the same message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type DeployHarness, deployHarness } from '../deploy/harness.js';

const config = (ref: string) => `resources:
- name: db
  type: Service
  properties:
    spec: {ports: [{port: 5432}], selector: {app: db}}
- name: settings
  type: ConfigMap
  properties:
    data:
      db: "object $(${ref})"
`;

describe('$(ref…): expand and deploy --dry-run agree', () => {
  let h: DeployHarness;
  before(async () => {
    h = await deployHarness();
  });
  after(async () => {
    await h.close();
  });

  for (const ref of ['ref.db', 'ref.db.spec.ports[0].port', 'ref.db.spec.ports.0.port']) {
    it(`$(${ref}) is accepted by both`, async () => {
      const file = `ok-${ref.replace(/[^a-z0-9]+/g, '-')}.yaml`;
      h.file(file, config(ref));
      const expanded = await h.dmJson<{ config: { resources: { name: string }[] } }>(['expand', file]);
      assert.equal(expanded.code, 0, expanded.stderr);
      assert.deepEqual(
        expanded.data.config.resources.map((r) => r.name),
        ['db', 'settings'],
      );
      const dry = await h.dm(['deploy', file, '--name', 'refs', '--dry-run']);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /create\s+ConfigMap\s+default\/settings/);
    });
  }

  it('$(ref.nope.x) is refused by both with the same message', async () => {
    h.file('bad.yaml', config('ref.nope.x'));
    const expanded = await h.dm(['expand', 'bad.yaml']);
    const dry = await h.dm(['deploy', 'bad.yaml', '--name', 'refs', '--dry-run']);
    assert.notEqual(expanded.code, 0);
    assert.equal(dry.code, expanded.code, dry.stderr);
    assert.match(expanded.stderr, /\$\(ref\.nope\.x\) references 'nope', which is not a resource/);
    assert.equal(dry.stderr, expanded.stderr);
  });
});
