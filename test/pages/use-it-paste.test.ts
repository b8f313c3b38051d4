/**
 * The template page's "Use it" block, pasted as a user would (docs/pages.md "Use it"): a real
 * dm-registry serves the page over HTTP; its configuration and commands run with the real `dm` in
 * an empty home, with no flag of their own, and resolve through the server that rendered the page.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningRegistry, startRegistry } from '../support/registry-server.js';
import { isolatedEnv, repoRoot, runDm } from '../support/run-cli.js';

const SAMPLES = 'github.com/dm-samples/templates';

function unescapeHtml(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

describe('the "Use it" block, pasted', () => {
  let registry: RunningRegistry;
  before(async () => {
    registry = await startRegistry([`${join(repoRoot, 'registry-fixtures')}=${SAMPLES}`]);
  });
  after(() => registry.stop());

  it('names the server that rendered the page, and its commands work as pasted', async () => {
    const res = await fetch(`${registry.url}/templates/${SAMPLES}/redis`);
    assert.equal(res.status, 200);
    const page = await res.text();
    const config = /<code id="use-config">([^<]*)<\/code>/.exec(page)?.[1];
    const commands = /<code id="use-commands">([^<]*)<\/code>/.exec(page)?.[1];
    assert.ok(config && commands, 'the page has both blocks');
    assert.ok(unescapeHtml(commands).includes(`--registry-url ${registry.url}`), commands);
    const env = await isolatedEnv();
    const dir = await mkdtemp(join(tmpdir(), 'dm-use-it-'));
    await writeFile(join(dir, 'config.yaml'), unescapeHtml(config));
    for (const line of unescapeHtml(commands).split('\n')) {
      const words = line.replace(/#.*$/, '').trim().split(/\s+/);
      assert.equal(words[0], 'dm', line);
      const r = await runDm(words.slice(1), { env, cwd: dir });
      assert.equal(r.code, 0, `${line}\n${r.stderr}`);
    }
  });
});
