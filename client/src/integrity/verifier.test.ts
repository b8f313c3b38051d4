import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DmError } from '../error.js';
import { signCheckpoint } from './checkpoint.js';
import { MemoryHashStore } from './hash-store.js';
import { generateLogKey, type LogSigner, parseSignerKey } from './keys.js';
import { MerkleLog } from './merkle-log.js';
import { encodeRecord, type LogRecord, recordKey } from './record.js';
import {
  type ChecksumLogSource,
  ChecksumVerifier,
  FileCheckpointMemory,
  type LookupAnswer,
  MemoryCheckpointMemory,
} from './verifier.js';

const code = (c: string) => (e: unknown) => e instanceof DmError && e.code === c;
const NAME = 'registry.test/checksums';
const keys = generateLogKey(NAME);
const signer = parseSignerKey(keys.signerKey);
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const rec = (template: string, version: string, d: string, supersedes?: string): LogRecord => ({
  template: `github.com/acme/templates/${template}`,
  version,
  digest: d,
  ...(supersedes ? { supersedes } : {}),
});

/** A log server in process: the real MerkleLog over a memory store, signing with the real key. */
class TestLogServer implements ChecksumLogSource {
  readonly records: string[] = [];
  readonly index = new Map<string, number>();
  /** Lets a test make the server lie about one answer. */
  lie: ((answer: LookupAnswer) => LookupAnswer | Promise<LookupAnswer>) | undefined;
  private constructor(
    readonly log: MerkleLog,
    readonly signer: LogSigner,
  ) {}
  static async create(records: LogRecord[], key = signer): Promise<TestLogServer> {
    const server = new TestLogServer(await MerkleLog.open(new MemoryHashStore()), key);
    await server.add(records);
    return server;
  }
  async add(records: LogRecord[]): Promise<void> {
    const data = records.map(encodeRecord);
    const first = await this.log.append(data);
    records.forEach((r, i) => {
      this.index.set(recordKey(r), first + i);
      this.records.push(data[i]!);
    });
  }
  async checkpoint(size = this.log.size): Promise<string> {
    return signCheckpoint({ size, root: await this.log.root(size) }, this.signer);
  }
  latestCheckpoint(): Promise<string> {
    return this.checkpoint();
  }
  consistencyProof(first: number, second: number): Promise<Buffer[]> {
    return this.log.consistencyProof(first, second);
  }
  async lookup(key: string): Promise<LookupAnswer> {
    const index = this.index.get(key);
    if (index === undefined)
      throw new DmError('NOT_FOUND', `${key} is not in the log`, { category: 'not-found' });
    const answer = {
      record: this.records[index]!,
      index,
      proof: await this.log.inclusionProof(index),
      checkpoint: await this.checkpoint(),
    };
    return this.lie ? this.lie(answer) : answer;
  }
}

const redis = rec('redis', 'v1.0.3', digest('a'));
const nginx = rec('web/nginx', 'v2', digest('b'));

describe('ChecksumVerifier', () => {
  it('verifies a digest the log holds, remembers the checkpoint, and follows the log as it grows', async () => {
    const server = await TestLogServer.create([redis, nginx]);
    const memory = new MemoryCheckpointMemory();
    const verifier = new ChecksumVerifier({ key: keys.verifierKey, source: server, memory });
    const found = await verifier.verifyDigest(redis);
    assert.equal(found.index, 0);
    assert.equal(found.record.digest, redis.digest);
    assert.equal((await verifier.remembered())?.size, 2);

    await server.add([
      rec('pg', 'v3.1.0', digest('c')),
      rec('pg', 'v3.1.1', digest('d')),
      rec('mq', 'v1', digest('e')),
    ]);
    const again = await verifier.verifyDigest(nginx);
    assert.equal(again.checkpoint.size, 5);
    assert.equal((await verifier.remembered())?.size, 5);
    // An older checkpoint that is a prefix of the remembered one is accepted but not remembered.
    const older = await verifier.advance(await server.checkpoint(3));
    assert.equal(older.size, 3);
    assert.equal((await verifier.remembered())?.size, 5);
  });

  it('refuses a server whose log has another digest, saying what differs and where', async () => {
    const server = await TestLogServer.create([redis, nginx]);
    const verifier = new ChecksumVerifier({
      key: keys.verifierKey,
      source: server,
      memory: new MemoryCheckpointMemory(),
    });
    await assert.rejects(verifier.verifyDigest({ ...redis, digest: digest('f') }), (e: unknown) => {
      assert.ok(code('CHECKSUM_MISMATCH')(e));
      const message = (e as Error).message;
      assert.match(message, /github\.com\/acme\/templates\/redis@v1\.0\.3/);
      assert.ok(message.includes(digest('f')) && message.includes(redis.digest) && message.includes(NAME));
      return true;
    });
  });

  it('names an accepted change when the log supersedes the locked digest', async () => {
    const server = await TestLogServer.create([redis]);
    await server.add([rec('redis', 'v1.0.3', digest('9'), redis.digest)]);
    const verifier = new ChecksumVerifier({
      key: keys.verifierKey,
      source: server,
      memory: new MemoryCheckpointMemory(),
    });
    await assert.rejects(
      verifier.verifyDigest(redis),
      (e: unknown) => code('CHECKSUM_MISMATCH')(e) && /accepted change replaced/.test((e as Error).message),
    );
  });

  it('refuses a server that answers the expected digest with a record its log does not hold', async () => {
    const server = await TestLogServer.create([redis, nginx, rec('pg', 'v1', digest('c'))]);
    server.lie = (a) => ({ ...a, record: encodeRecord({ ...redis, digest: digest('f') }) });
    const verifier = new ChecksumVerifier({
      key: keys.verifierKey,
      source: server,
      memory: new MemoryCheckpointMemory(),
    });
    await assert.rejects(
      verifier.verifyDigest({ ...redis, digest: digest('f') }),
      code('CHECKSUM_INCLUSION_FAILED'),
    );
    server.lie = (a) => ({ ...a, index: 1 });
    await assert.rejects(verifier.verifyDigest(redis), code('CHECKSUM_INCLUSION_FAILED'));
    server.lie = (a) => ({ ...a, index: 7 });
    await assert.rejects(verifier.verifyDigest(redis), code('CHECKSUM_INCLUSION_FAILED'));
    server.lie = (a) => ({ ...a, proof: a.proof.slice(1) });
    await assert.rejects(verifier.verifyDigest(redis), code('CHECKSUM_INCLUSION_FAILED'));
    server.lie = (a) => ({ ...a, record: server.records[1]!, index: 1, proof: a.proof });
    await assert.rejects(verifier.verifyDigest(redis), code('CHECKSUM_INCLUSION_FAILED'));
  });

  it('refuses a malformed expectation before asking the server', async () => {
    const server = await TestLogServer.create([redis]);
    let asked = 0;
    server.lie = (a) => {
      asked++;
      return a;
    };
    const verifier = new ChecksumVerifier({
      key: keys.verifierKey,
      source: server,
      memory: new MemoryCheckpointMemory(),
    });
    await assert.rejects(
      verifier.verifyDigest({ ...redis, template: 'redis' }),
      code('CHECKSUM_RECORD_INVALID'),
    );
    await assert.rejects(
      verifier.verifyDigest({ ...redis, digest: 'sha256:abc' }),
      code('CHECKSUM_RECORD_INVALID'),
    );
    assert.equal(asked, 0);
    await verifier.verifyDigest(redis);
    assert.equal(asked, 1);
  });

  it('refuses an answer for another version than asked', async () => {
    const server = await TestLogServer.create([redis, nginx]);
    const honest = await server.lookup(recordKey(nginx));
    server.lie = () => honest;
    const verifier = new ChecksumVerifier({
      key: keys.verifierKey,
      source: server,
      memory: new MemoryCheckpointMemory(),
    });
    await assert.rejects(verifier.verifyDigest(redis), code('CHECKSUM_MISMATCH'));
  });

  it('refuses a tampered or foreign checkpoint and remembers nothing from it', async () => {
    const server = await TestLogServer.create([redis, nginx]);
    const memory = new MemoryCheckpointMemory();
    const verifier = new ChecksumVerifier({ key: keys.verifierKey, source: server, memory });
    server.lie = (a) => ({ ...a, checkpoint: a.checkpoint.replace(`${NAME}\n2\n`, `${NAME}\n3\n`) });
    await assert.rejects(verifier.verifyDigest(redis), code('CHECKSUM_SIGNATURE_INVALID'));
    const impostor = await TestLogServer.create(
      [redis, nginx],
      parseSignerKey(generateLogKey(NAME).signerKey),
    );
    const fooled = new ChecksumVerifier({ key: keys.verifierKey, source: impostor, memory });
    await assert.rejects(fooled.verifyDigest(redis), code('CHECKSUM_CHECKPOINT_UNTRUSTED'));
    assert.equal(memory.load(), undefined);
  });

  it('refuses a server whose new checkpoint is inconsistent with the one verified before', async () => {
    const server = await TestLogServer.create([redis, nginx, rec('pg', 'v1', digest('c'))]);
    const memory = new MemoryCheckpointMemory();
    await new ChecksumVerifier({ key: keys.verifierKey, source: server, memory }).verifyDigest(redis);
    const seen = memory.load();

    // The server rewrites history: same first record, the second one changed, then grows.
    const forked = await TestLogServer.create([
      redis,
      { ...nginx, digest: digest('e') },
      rec('pg', 'v1', digest('c')),
    ]);
    await forked.add([rec('mq', 'v1', digest('d'))]);
    const verifier = new ChecksumVerifier({ key: keys.verifierKey, source: forked, memory });
    await assert.rejects(verifier.verifyDigest(redis), (e: unknown) => {
      assert.ok(code('CHECKSUM_LOG_INCONSISTENT')(e));
      assert.match((e as Error).message, /at size 4 contradicts the one verified before at size 3/);
      return true;
    });
    // Same size, other root; a smaller tree that is not a prefix.
    await assert.rejects(verifier.advance(await forked.checkpoint(3)), code('CHECKSUM_LOG_INCONSISTENT'));
    await assert.rejects(verifier.advance(await forked.checkpoint(2)), code('CHECKSUM_LOG_INCONSISTENT'));
    assert.equal(memory.load(), seen);
    // A server that lies in its consistency proof is caught the same way.
    await server.add([rec('mq', 'v1', digest('d'))]);
    const liar: ChecksumLogSource = {
      latestCheckpoint: () => server.latestCheckpoint(),
      lookup: (k) => server.lookup(k),
      consistencyProof: async (a, b) => (await server.consistencyProof(a, b)).reverse(),
    };
    await assert.rejects(
      new ChecksumVerifier({ key: keys.verifierKey, source: liar, memory }).advance(),
      code('CHECKSUM_LOG_INCONSISTENT'),
    );
    assert.equal(memory.load(), seen);
  });

  describe('FileCheckpointMemory', () => {
    let dir = '';
    after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    it('keeps the latest checkpoint across runs, and says which file holds an altered one', async () => {
      dir = await mkdtemp(join(tmpdir(), 'dm-checksums-'));
      const file = join(dir, 'checksums', NAME, 'latest');
      const server = await TestLogServer.create([redis]);
      const first = new ChecksumVerifier({
        key: keys.verifierKey,
        source: server,
        memory: new FileCheckpointMemory(file),
      });
      assert.equal(await first.remembered(), undefined);
      await first.verifyDigest(redis);
      assert.equal(await readFile(file, 'utf8'), await server.checkpoint());

      await server.add([nginx]);
      const second = new ChecksumVerifier({
        key: keys.verifierKey,
        source: server,
        memory: new FileCheckpointMemory(file),
      });
      await second.verifyDigest(nginx);
      assert.equal((await second.remembered())?.size, 2);

      await writeFile(file, (await readFile(file, 'utf8')).replace(`${NAME}\n2\n`, `${NAME}\n1\n`));
      await assert.rejects(second.advance(), (e: unknown) => {
        assert.ok(code('CHECKSUM_SIGNATURE_INVALID')(e));
        assert.ok((e as Error).message.includes(file));
        return true;
      });
    });
  });
});
