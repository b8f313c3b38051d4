/**
 * The Jinja renderer's channel (client/src/expand/sandbox/frame-channel.ts): messages cut into
 * frames come back whole and in order however the stream splits them, values as Node's advanced
 * IPC carried them, and a frame longer than allowed is refused before it is read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeFrame, FrameReader } from '../../client/src/expand/sandbox/frame-channel.js';

/** The stream of `messages`' frames, cut at `cuts` (offsets, any order), read back. */
function readBack(
  messages: unknown[],
  cuts: number[],
  maxBytes = 1 << 30,
): { got: unknown[]; overflow: number } {
  const stream = Buffer.concat(messages.map(encodeFrame));
  const at = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  const got: unknown[] = [];
  let overflow = 0;
  const reader = new FrameReader(
    maxBytes,
    (m) => got.push(m),
    () => overflow++,
  );
  let from = 0;
  for (const to of [...at, stream.length]) {
    if (to > from) reader.push(stream.subarray(from, to));
    from = Math.max(from, to);
  }
  return { got, overflow };
}

const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt(),
    fc.date({ noInvalidDate: true }),
  ),
  node: fc.oneof(
    { depthSize: 'small' },
    tie('leaf'),
    fc.array(tie('node')),
    fc.dictionary(fc.string(), tie('node'), { noNullPrototype: true }),
  ),
})).node;

describe('the frame channel', () => {
  it('gives back every message, whole and in order, however the stream is cut', () => {
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (messages, cuts) => {
          const { got, overflow } = readBack(messages, cuts);
          assert.equal(overflow, 0);
          assert.deepStrictEqual(got, messages);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a large message sent in many small pieces', () => {
    const big = { text: 'x'.repeat(3_000_000), list: Array.from({ length: 10_000 }, (_, i) => ({ i })) };
    const cuts = Array.from({ length: 2_000 }, (_, i) => i * 1_500 + 1);
    const { got } = readBack([big, 'after'], cuts);
    assert.deepStrictEqual(got, [big, 'after']);
  });

  it('refuses a frame longer than allowed, and reads nothing after it', () => {
    const { got, overflow } = readBack(['small', 'y'.repeat(5_000), 'never'], [3, 9, 40], 1_000);
    assert.deepStrictEqual(got, ['small']);
    assert.equal(overflow, 1);
  });
});
