/**
 * The escape corpus through the manager API (docs/expansion.md, "Isolation"): a configuration
 * posted to `/api/v1/expand` imports a Python template that switches the in-process guard off and
 * then reads the server's secret files (a token file only its owner may read, /etc/shadow), lists
 * $HOME, writes a file and connects back to 127.0.0.1. The server runs it in its sandbox (a
 * registry's template: namespaces required); every escape fails, the answer tells nothing of what
 * it tried to read, and the server answers the next expansion. The store is not involved: SQLite.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startManagerServer } from '../manager/fixtures.js';
import {
  assertContained,
  escapeFixture,
  escapes,
  escapeTemplate,
  type Fixture,
  SWITCH_OFF,
} from './python-escape-corpus.js';

let fixture: Fixture;
before(async () => {
  fixture = await escapeFixture('dm-escape-manager-');
});
after(() => fixture.close());

const TRIED = [
  'read the admin token file',
  'read /etc/shadow',
  'list $HOME',
  'write a file',
  'TCP connect to 127.0.0.1',
];

describe('the manager API runs Python templates inside the operating-system boundary', () => {
  it('a posted template with its guard switched off reads, lists, writes and connects nothing', async () => {
    const server = await startManagerServer('dm-manager-escape-');
    try {
      const expand = async (source: string) => {
        const res = await server.expand({
          content: 'imports:\n- path: t.py\nresources:\n- name: r\n  type: t.py\n',
          imports: [{ name: 't.py', content: source }],
        });
        return `${res.status} ${res.text}`;
      };
      for (const name of TRIED) {
        const marker = join(fixture.dir, name.replace(/[^a-z0-9]+/gi, '_'));
        const before = fixture.connections();
        // What the escape returns comes back as a ConfigMap's data: the answer is the channel.
        const attempt = escapeTemplate(
          SWITCH_OFF['__subclasses__ walk']!,
          escapes(marker, fixture.targets)[name]!,
        );
        const answer = await expand(
          `${attempt.replace('def GenerateConfig(c):', 'def attempt():')}\ndef GenerateConfig(c):\n    return {'resources': [{'name': 'leak', 'type': 'ConfigMap', 'properties': {'data': {'v': str(attempt())}}}]}\n`,
        );
        assert.doesNotMatch(answer, /^200 /, answer);
        assertContained(answer, marker);
        assert.equal(fixture.connections(), before, 'a connection reached 127.0.0.1');
      }
      const ok = await expand(
        "def GenerateConfig(c):\n    return {'resources': [{'name': 'cm', 'type': 'ConfigMap', 'properties': {'data': {'a': '1'}}}]}\n",
      );
      assert.match(ok, /^200 /, ok);
    } finally {
      await server.close();
    }
  });
});
