import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../error.js';
import { formatCheckpoint, parseCheckpoint, signCheckpoint, verifyCheckpoint } from './checkpoint.js';
import {
  generateLogKey,
  isValidKeyName,
  keyHash,
  parseSignerKey,
  parseVerifierKey,
  signBytes,
  verifyBytes,
} from './keys.js';
import { openNote, parseNote, signNote } from './note.js';

const code = (c: string) => (e: unknown) => e instanceof DmError && e.code === c;
const NAME = 'dm.example.com/checksums';
const { signerKey, verifierKey } = generateLogKey(NAME);
const signer = parseSignerKey(signerKey);
const verifier = parseVerifierKey(verifierKey);
const root = createHash('sha256').update('root').digest();

describe('log keys', () => {
  it('generateLogKey() makes a signer and a verifier key that parse and belong together', () => {
    assert.match(signerKey, /^PRIVATE\+KEY\+dm\.example\.com\/checksums\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    assert.match(verifierKey, /^dm\.example\.com\/checksums\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    assert.equal(signer.verifierKey, verifierKey);
    assert.equal(verifier.name, NAME);
    assert.equal(verifier.keyHash, signer.keyHash);
    assert.equal(verifier.text, verifierKey);
    const sig = signBytes(signer, Buffer.from('bundle'));
    assert.equal(sig.length, 64);
    assert.equal(verifyBytes(verifier, Buffer.from('bundle'), sig), true);
    assert.equal(verifyBytes(verifier, Buffer.from('bundle!'), sig), false);
  });

  it('the key hash is the first four bytes of SHA-256(name ‖ "\\n" ‖ 0x01 ‖ key)', () => {
    const raw = Buffer.from(verifierKey.slice(NAME.length + 10), 'base64').subarray(1);
    const expected = createHash('sha256')
      .update(`${NAME}\n`)
      .update(Buffer.from([1]))
      .update(raw)
      .digest()
      .readUInt32BE(0);
    assert.equal(keyHash(NAME, raw), expected);
    assert.equal(verifier.keyHash, expected);
  });

  it('refuses malformed keys and names, without echoing a signer key', () => {
    const [name, hash, data] = [
      NAME,
      verifierKey.slice(NAME.length + 1, NAME.length + 9),
      verifierKey.slice(NAME.length + 10),
    ];
    const otherHash = ((Number.parseInt(hash, 16) + 1) % 2 ** 32).toString(16).padStart(8, '0');
    for (const bad of [
      '',
      'name',
      `${name}+${hash}`,
      `${name}+${otherHash}+${data}`,
      `${name}+${hash.toUpperCase()}+${data}`,
      `${name}+${hash}+${Buffer.concat([Buffer.from([2]), Buffer.alloc(32)]).toString('base64')}`,
      `${name}+${hash}+${data.slice(0, 20)}`,
      `a b+${hash}+${data}`,
    ]) {
      assert.throws(() => parseVerifierKey(bad), code('CHECKSUM_KEY_INVALID'), bad);
    }
    assert.throws(() => parseSignerKey(verifierKey), code('CHECKSUM_KEY_INVALID'));
    const tampered = `${signerKey.slice(0, -6)}AAAAA=`;
    assert.throws(
      () => parseSignerKey(tampered),
      (e: unknown) => code('CHECKSUM_KEY_INVALID')(e) && !(e as Error).message.includes(tampered.slice(-20)),
    );
    for (const bad of ['', 'a b', 'a+b', 'tab\there', 'x\u0000', 'x'.repeat(257)])
      assert.equal(isValidKeyName(bad), false, bad);
    assert.throws(() => generateLogKey('a+b'), code('CHECKSUM_KEY_INVALID'));
  });
});

describe('signed notes', () => {
  it('signNote() output opens with the key and has the Go note layout', () => {
    const note = signNote('hello\nworld\n', signer);
    assert.match(note, /^hello\nworld\n\n\u2014 dm\.example\.com\/checksums [A-Za-z0-9+/]{91}=\n$/);
    assert.equal(openNote(note, verifier), 'hello\nworld\n');
    const { signatures } = parseNote(note);
    assert.equal(signatures.length, 1);
    assert.equal(signatures[0]!.keyHash, signer.keyHash);
  });

  it('opens a note with extra signatures by other keys, in any order', () => {
    const other = parseSignerKey(generateLogKey('witness.example').signerKey);
    const signed = signNote('text\n', other);
    const mine = signNote('text\n', signer);
    const both = `${signed}${mine.slice(mine.indexOf('\u2014'))}`;
    assert.equal(openNote(both, verifier), 'text\n');
  });

  it('refuses malformed notes, texts that cannot be signed, and notes over the size limit', () => {
    const note = signNote('a\n', signer);
    for (const bad of [
      'a\n',
      'a\n\n',
      note.replace('\u2014 ', '-- '),
      note.slice(0, -1),
      note.replace(/ ([^ ]+)\n$/, ' not*base64\n'),
      `${note}\u2014 x\n`,
      `a\n\n${`\u2014 x AAAAAAA=\n`.repeat(101)}`,
      `${'x'.repeat(70_000)}\n${note}`,
    ]) {
      assert.throws(
        () => openNote(bad, verifier),
        code('CHECKSUM_CHECKPOINT_INVALID'),
        JSON.stringify(bad.slice(0, 60)),
      );
    }
    for (const text of ['', 'no newline', 'a\n\nb\n', 'bell\u0007\n']) {
      assert.throws(() => signNote(text, signer), code('CHECKSUM_CHECKPOINT_INVALID'), JSON.stringify(text));
    }
  });
});

describe('checkpoints', () => {
  const note = signCheckpoint({ size: 1234567, root }, signer);

  it('verifyCheckpoint() returns what signCheckpoint() signed', () => {
    assert.ok(note.startsWith(`${NAME}\n1234567\n${root.toString('base64')}\n\n\u2014 ${NAME} `));
    const cp = verifyCheckpoint(note, verifier);
    assert.equal(cp.origin, NAME);
    assert.equal(cp.size, 1234567);
    assert.deepEqual(cp.root, root);
    assert.equal(cp.note, note);
  });

  it('rejects a tampered size, root, origin or signature with CHECKSUM_SIGNATURE_INVALID', () => {
    const other = createHash('sha256').update('other').digest().toString('base64');
    const lines = note.split('\n');
    const sig = lines.at(-2)!;
    const flipped = `${sig.slice(0, -6)}${sig.at(-6) === 'A' ? 'B' : 'A'}${sig.slice(-5)}`;
    for (const tampered of [
      note.replace('\n1234567\n', '\n1234568\n'),
      note.replace('\n1234567\n', '\n234567\n'),
      note.replace(root.toString('base64'), other),
      note.replace(`${NAME}\n1234567`, `${NAME}\n1234567\nextension`),
      [...lines.slice(0, -2), flipped, ''].join('\n'),
    ]) {
      assert.notEqual(tampered, note);
      assert.throws(() => verifyCheckpoint(tampered, verifier), code('CHECKSUM_SIGNATURE_INVALID'));
    }
  });

  it('rejects a checkpoint signed by another key, even of the same name, with CHECKSUM_CHECKPOINT_UNTRUSTED', () => {
    const impostor = parseSignerKey(generateLogKey(NAME).signerKey);
    const forged = signCheckpoint({ size: 1234567, root }, impostor);
    assert.throws(() => verifyCheckpoint(forged, verifier), code('CHECKSUM_CHECKPOINT_UNTRUSTED'));
    const wrongKey = parseVerifierKey(generateLogKey(NAME).verifierKey);
    assert.throws(() => verifyCheckpoint(note, wrongKey), code('CHECKSUM_CHECKPOINT_UNTRUSTED'));
  });

  it('rejects a checkpoint of another origin signed with the right key', () => {
    const text = formatCheckpoint({ origin: 'other.example/log', size: 1, root });
    const note2 = signNote(text, signer);
    assert.throws(() => verifyCheckpoint(note2, verifier), code('CHECKSUM_CHECKPOINT_UNTRUSTED'));
    assert.throws(
      () => signCheckpoint({ origin: 'other.example/log', size: 1, root }, signer),
      code('CHECKSUM_CHECKPOINT_INVALID'),
    );
  });

  it('rejects malformed checkpoint text even when it is signed', () => {
    const b64 = root.toString('base64');
    for (const text of [
      `${NAME}\n`,
      `${NAME}\n12\n`,
      `${NAME}\n012\n${b64}\n`,
      `${NAME}\n-1\n${b64}\n`,
      `${NAME}\n9007199254740992\n${b64}\n`,
      `${NAME}\n12\n${b64.slice(1)}\n`,
      `${NAME}\n12\n${root.toString('hex')}\n`,
      `${NAME}\n12\n${b64}\n${'x\n'.repeat(17)}`,
    ]) {
      assert.throws(
        () => verifyCheckpoint(signNote(text, signer), verifier),
        code('CHECKSUM_CHECKPOINT_INVALID'),
        text,
      );
    }
  });

  it('text round trip: parseCheckpoint(formatCheckpoint(c)) = c, and through a signed note', () => {
    const lineArb = fc
      .string({ minLength: 1, maxLength: 40, unit: 'grapheme' })
      .filter((s) => !/[\n\p{Cc}]/u.test(s));
    fc.assert(
      fc.property(
        fc.constantFrom(NAME, 'sum.example', 'a/b/c'),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(lineArb, { maxLength: 3 }),
        (origin, size, rootBytes, extensions) => {
          const c = {
            origin,
            size,
            root: Buffer.from(rootBytes),
            ...(extensions.length ? { extensions } : {}),
          };
          const text = formatCheckpoint(c);
          assert.deepEqual(parseCheckpoint(text), c);
          assert.equal(formatCheckpoint(parseCheckpoint(text)), text);
          if (origin === NAME) {
            const { note: _n, ...back } = verifyCheckpoint(signCheckpoint(c, signer), verifier);
            assert.deepEqual(back, c);
          }
        },
      ),
    );
  });
});
