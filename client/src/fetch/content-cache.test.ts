import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DmError } from '../error.js';
import { ContentCache, sha256Digest } from './content-cache.js';

async function newCache(warnings: string[] = []): Promise<ContentCache> {
  return new ContentCache({
    root: await mkdtemp(join(tmpdir(), 'dm-cache-')),
    warn: (m) => warnings.push(m),
  });
}

describe('ContentCache', () => {
  it('stores content by sha256 and reads it back verified', async () => {
    const cache = await newCache();
    const digest = await cache.write('hello\n');
    assert.equal(digest, sha256Digest('hello\n'));
    assert.equal((await cache.read(digest))?.toString(), 'hello\n');
    assert.equal(await cache.read(sha256Digest('other')), undefined);
  });
  it('detects a flipped byte, discards the entry and warns', async () => {
    const warnings: string[] = [];
    const cache = await newCache(warnings);
    const digest = await cache.write('important content');
    const path = cache.pathOf(digest);
    const bytes = await readFile(path);
    bytes[0] = bytes[0]! ^ 0xff;
    await writeFile(path, bytes);
    assert.equal(await cache.read(digest), undefined);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /corrupted/);
    assert.equal(await cache.read(digest), undefined, 'the corrupted file is gone');
    await cache.write('important content');
    assert.equal((await cache.read(digest))?.toString(), 'important content');
  });
  it('rejects content whose digest differs from the expected one and writes nothing', async () => {
    const cache = await newCache();
    await assert.rejects(
      cache.write('x', sha256Digest('y')),
      (e: unknown) => e instanceof DmError && e.code === 'DIGEST_MISMATCH',
    );
    assert.deepEqual(await cache.list(), []);
  });
  it('verify() removes corrupted entries and clean() empties the cache', async () => {
    const cache = await newCache();
    const a = await cache.write('a');
    const b = await cache.write('b');
    await writeFile(cache.pathOf(b), 'not b');
    const result = await cache.verify();
    assert.deepEqual(result, { checked: 2, corrupted: [b] });
    assert.deepEqual(
      (await cache.list()).map((e) => e.digest),
      [a],
    );
    await cache.writeMeta('versions:x', ['v1'], { etag: '"e1"' });
    assert.deepEqual((await cache.readMeta<string[]>('versions:x'))?.value, ['v1']);
    assert.deepEqual(await cache.clean(), { removed: 1, bytes: 1 });
    assert.equal(await cache.readMeta('versions:x'), undefined);
  });
  it('is safe under concurrent writers in separate processes', async () => {
    const cache = await newCache();
    const module = fileURLToPath(new URL('./content-cache.js', import.meta.url));
    const script = `
      const { ContentCache } = await import(${JSON.stringify(module)});
      const cache = new ContentCache({ root: ${JSON.stringify(cache.root)} });
      for (let i = 0; i < 200; i++) await cache.write('shared content ' + (i % 20) + 'x'.repeat(i * 100));
    `;
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<number>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
          child.on('exit', (code) => resolve(code ?? 1));
        }),
    );
    assert.deepEqual(await Promise.all(runs), [0, 0, 0, 0]);
    const { checked, corrupted } = await cache.verify();
    assert.equal(checked, 200);
    assert.deepEqual(corrupted, []);
  });
});
