/**
 * Differential test: random documents and merge specifications through dm's engine and through
 * cloud-init's own merging code (Debian's package, unpacked by test/support/cloud-init.sh), in all
 * three modes. Results must be equal with key order; skipped parts and error kinds must match.
 * There is no documented difference for the inputs generated here (string keys, JSON scalars);
 * docs/merging.md lists the differences outside them (YAML loading, non-string keys).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { DmError } from '../../client/src/error.js';
import { type LoadedDocument, mergeLoadedDocuments, mergeRaw } from '../../client/src/merge/index.js';
import * as arb from './arbitraries.js';
import {
  type CloudInit,
  CloudInitReference,
  decodeFromPython,
  encodeForPython,
  findCloudInit,
} from './cloud-init-reference.js';
import { findDifference } from './compare.js';

const RUNS = Number(process.env.DM_DIFFERENTIAL_RUNS ?? 1500);

function loaded(
  documents: readonly unknown[],
  headers?: readonly (Record<string, string> | null)[],
): LoadedDocument[] {
  return documents.map((document, i) => {
    const h = headers?.[i];
    return { document, file: `part${i}`, position: 1, source: `part${i}`, ...(h ? { headers: h } : {}) };
  });
}

type Outcome = { result: unknown; skipped?: { index: number; kind: string }[] } | { error: string };

function dm(run: () => Outcome): Outcome {
  try {
    return run();
  } catch (error) {
    if (error instanceof DmError) return { error: error.code };
    throw error;
  }
}

function python(answer: Record<string, unknown>): Outcome {
  if ('fatal' in answer) throw new Error(`reference script failed: ${String(answer.fatal)}`);
  if ('error' in answer) return { error: String(answer.error) };
  return {
    result: decodeFromPython(answer.result),
    ...(answer.skipped ? { skipped: answer.skipped as { index: number; kind: string }[] } : {}),
  };
}

function assertSame(ours: Outcome, theirs: Outcome, input: unknown): void {
  const show = () => JSON.stringify(encodeForPython(input));
  if ('error' in theirs || 'error' in ours) {
    assert.deepEqual(ours, theirs, `input ${show()}`);
    return;
  }
  const diff = findDifference(ours.result, theirs.result, true);
  assert.equal(diff, undefined, `${diff}\ninput ${show()}`);
  assert.deepEqual(ours.skipped ?? [], theirs.skipped ?? [], `skipped parts differ; input ${show()}`);
}

describe('dm merge engine agrees with cloud-init (differential)', () => {
  let cloudInit: CloudInit;
  let reference: CloudInitReference;

  before(() => {
    cloudInit = findCloudInit(); // fails (does not skip) when cloud-init is missing
    reference = new CloudInitReference(cloudInit);
  });
  after(() => reference?.close());

  it('runs cloud-init 22.4.x', async () => {
    const answer = await reference.request({ mode: 'version' });
    assert.match(String(answer.version), /^22\.4\./);
  });

  it('user-data: random parts with merge_how, merge_type and headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(arb.part, arb.headers), { minLength: 1, maxLength: 4 }),
        async (parts) => {
          const docs = parts.map(([d]) => d);
          const headers = parts.map(([, h]) => h);
          const ours = dm(() => {
            const out = mergeLoadedDocuments(loaded(docs, headers), { as: 'user-data' });
            return {
              result: out.result,
              skipped: out.skipped.map((s) => ({ index: s.index, kind: s.code })),
            };
          });
          const theirs = python(
            await reference.request({ mode: 'userdata', parts: docs.map(encodeForPython), headers }),
          );
          assertSame(ours, theirs, { docs, headers });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('mergemanydict (values files): random sources, both orders', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arb.part, { maxLength: 4 }), fc.boolean(), async (sources, reverse) => {
        // `--as values` is mergemanydict(reverse=True); reverse=False is the same with the files reversed.
        const ours = dm(() => {
          const docs = loaded(sources);
          return { result: mergeLoadedDocuments(reverse ? docs : docs.reverse(), { as: 'values' }).result };
        });
        const theirs = python(
          await reference.request({ mode: 'mergemanydict', sources: sources.map(encodeForPython), reverse }),
        );
        assertSame(ours, theirs, { sources, reverse });
      }),
      { numRuns: RUNS },
    );
  });

  it('raw merges: random values with string-form specifications (the --merge-how path)', async () => {
    await fc.assert(
      fc.asyncProperty(arb.mergeHowString, arb.value, arb.value, async (how, a, b) => {
        const ours = dm(() => ({ result: mergeRaw(a, b, how) }));
        const theirs = python(
          await reference.request({
            mode: 'merger',
            merge_how: how,
            a: encodeForPython(a),
            b: encodeForPython(b),
          }),
        );
        assertSame(ours, theirs, { how, a, b });
      }),
      { numRuns: RUNS },
    );
  });

  it('raw merges: mappings with list-form and odd specifications', async () => {
    await fc.assert(
      fc.asyncProperty(arb.mergeHowValue, arb.map, arb.map, async (how, a, b) => {
        const ours = dm(() => ({ result: mergeRaw(a, b, how) }));
        const theirs = python(
          await reference.request({
            mode: 'merger',
            merge_how: encodeForPython(how),
            a: encodeForPython(a),
            b: encodeForPython(b),
          }),
        );
        assertSame(ours, theirs, { how, a, b });
      }),
      { numRuns: RUNS },
    );
  });
});
