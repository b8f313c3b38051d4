/**
 * The add-versions plan (add-versions.ts; docs/mirroring.md), as rules over random inputs: which
 * versions are new, unchanged or in conflict (nothing written on any conflict), when an added
 * version becomes its template's latest, and how versions are named and keyed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDmError } from '../../../client/src/error.js';
import { compareVersions, tryParseVersion } from '../../../client/src/reference/index.js';
import { schemaInfo } from '../indexer/build-index.js';
import {
  conflictError,
  contentMissing,
  exactName,
  newer,
  schemaInfoOf,
  sortAdded,
  takesLatest,
  versionKey,
} from './add-versions.js';
import type { AddedVersion } from './contract.js';

const REGISTRY = 'git.example/acme/templates';
const digestOf = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;

const semver = fc
  .tuple(
    fc.nat(3),
    fc.nat(3),
    fc.nat(3),
    fc.option(fc.constantFrom('rc.1', 'rc.2', 'alpha'), { nil: undefined }),
  )
  .map(([a, b, c, pre]) => `v${a}.${b}.${c}${pre ? `-${pre}` : ''}`);
/** Version names as registries have them: semver-like ones, short ones (`v1`), and names that are not versions. */
const versionName = fc.oneof(semver, fc.constantFrom('v1', 'v1.1', 'v2', 'latest', 'main', 'edge'));

function added(v: {
  collection: string;
  template: string;
  version: string;
  digest: number;
  supersedes?: number;
}): AddedVersion {
  return {
    collection: v.collection,
    template: v.template,
    version: v.version,
    kind: 'jinja',
    dir: `${v.template}/${v.version}`,
    templateFile: `${v.template}.jinja`,
    schemaFile: null,
    hasExample: false,
    digest: digestOf(v.digest),
    schemaJson: null,
    files: [],
    ...(v.supersedes === undefined ? {} : { supersedes: digestOf(v.supersedes) }),
  };
}

/** Versions to add (unique by key), each with what is stored for it: nothing, or a digest. */
const batch = fc.uniqueArray(
  fc.record({
    collection: fc.constantFrom('', 'infra'),
    template: fc.constantFrom('redis', 'nginx', 'db'),
    version: versionName,
    digest: fc.nat(3),
    stored: fc.option(fc.nat(3), { nil: undefined }),
    supersedes: fc.option(fc.nat(3), { nil: undefined }),
  }),
  { selector: (v) => versionKey(v), maxLength: 12 },
);

describe('the add-versions plan', () => {
  it('sorts every version into new, unchanged or conflicting; any conflict writes nothing and names them all', () => {
    fc.assert(
      fc.property(batch, (specs) => {
        const versions = specs.map(added);
        const stored = new Map(
          specs.flatMap((s) => (s.stored === undefined ? [] : [[versionKey(s), digestOf(s.stored)]])),
        );
        const isNew = (v: AddedVersion) => !stored.has(versionKey(v));
        const same = (v: AddedVersion) => stored.get(versionKey(v)) === v.digest;
        const replaces = (v: AddedVersion) =>
          !same(v) && v.supersedes !== undefined && stored.get(versionKey(v)) === v.supersedes;
        const conflicting = versions.filter((v) => !isNew(v) && !same(v) && !replaces(v));
        const sort = () => sortAdded(REGISTRY, versions, (v) => stored.get(versionKey(v)));
        if (conflicting.length > 0) {
          assert.throws(sort, (e: unknown) => {
            assert.ok(isDmError(e) && e.code === 'VERSION_CONFLICT' && e.category === 'conflict');
            const listed = (
              e.details as { conflicts: { reference: string; stored: string; incoming: string }[] }
            ).conflicts;
            assert.deepEqual(
              listed,
              conflicting.map((v) => ({
                reference: exactName(REGISTRY, v),
                stored: stored.get(versionKey(v)),
                incoming: v.digest,
              })),
            );
            assert.ok(
              e.message.startsWith(`${exactName(REGISTRY, conflicting[0]!)} is stored with digest`),
              e.message,
            );
            return true;
          });
          return;
        }
        const { todo, unchanged } = sort();
        // Order kept: the new and the accepted replacements, as given.
        assert.deepEqual(
          todo,
          versions.filter((v) => isNew(v) || replaces(v)),
        );
        assert.equal(unchanged, versions.filter(same).length);
        assert.equal(todo.length + unchanged, versions.length);
      }),
    );
  });

  it('takes the latest for a newer version, or for the latest replaced; never for an older one', () => {
    fc.assert(
      fc.property(
        versionName,
        fc.option(versionName, { nil: null }),
        fc.boolean(),
        (version, latest, supersedes) => {
          const v = {
            ...added({ collection: '', template: 't', version, digest: 1 }),
            ...(supersedes ? { supersedes: digestOf(0) } : {}),
          };
          assert.equal(takesLatest(v, latest), newer(version, latest) || (supersedes && version === latest));
          if (latest === null) assert.equal(takesLatest(v, latest), true);
          if (!supersedes && latest !== null && newer(latest, version))
            assert.equal(takesLatest(v, latest), false);
        },
      ),
    );
  });

  it('orders versions by semver where both are versions, else by name: irreflexive and antisymmetric', () => {
    fc.assert(
      fc.property(versionName, versionName, (a, b) => {
        assert.equal(newer(a, a), false);
        assert.ok(!(newer(a, b) && newer(b, a)), `${a} ${b}`);
        const va = tryParseVersion(a);
        const vb = tryParseVersion(b);
        if (va && vb) assert.equal(newer(a, b), compareVersions(va, vb) > 0);
        else if (a !== b) assert.equal(newer(a, b) || newer(b, a), true);
      }),
    );
    assert.equal(newer('v1.10.0', 'v1.9.0'), true);
    assert.equal(newer('v2.0.0-rc.1', 'v2.0.0'), false);
    assert.equal(newer('v1', 'v1.0.0'), false);
  });

  it('keys and names versions without ambiguity', () => {
    const part = fc.string({ maxLength: 6 }).filter((s) => !s.includes('\0'));
    const triple = fc.record({ collection: part, template: part, version: part });
    fc.assert(
      fc.property(triple, triple, (a, b) => {
        const equal = a.collection === b.collection && a.template === b.template && a.version === b.version;
        assert.equal(versionKey(a) === versionKey(b), equal);
      }),
    );
    assert.equal(
      exactName(REGISTRY, { collection: '', template: 'redis', version: 'v1' }),
      `${REGISTRY}/redis:=v1`,
    );
    assert.equal(
      exactName(REGISTRY, { collection: 'infra', template: 'redis', version: 'v1' }),
      `${REGISTRY}/infra/redis:=v1`,
    );
  });

  it('reads a schema as the indexer does, and an unreadable one as none', () => {
    const schema = fc.record({
      properties: fc.dictionary(
        fc.constantFrom('port', 'image', 'replicas'),
        fc.record({ type: fc.constantFrom('string', 'integer') }),
      ),
    });
    fc.assert(
      fc.property(schema, (s) => {
        assert.deepEqual(schemaInfoOf(JSON.stringify(s)), schemaInfo(s));
      }),
    );
    assert.deepEqual(schemaInfoOf('{not json'), schemaInfo(null));
    assert.deepEqual(schemaInfoOf(null), schemaInfo(null));
    assert.deepEqual(schemaInfoOf(''), schemaInfo(null));
  });

  it('says what is wrong in one sentence: a conflict counts the others, missing content names the file', () => {
    const one = { reference: `${REGISTRY}/redis:=v1`, stored: digestOf(1), incoming: digestOf(2) };
    assert.equal(
      conflictError([one]).message,
      `${REGISTRY}/redis:=v1 is stored with digest ${digestOf(1)} and would become ${digestOf(2)}; published versions never change, so nothing was written`,
    );
    assert.match(conflictError([one, one, one]).message, /nothing was written \(3 versions conflict\)$/);
    const v = added({ collection: '', template: 'redis', version: 'v1', digest: 1 });
    const missing = contentMissing(v, { path: 'a/b.yaml', sha256: 'abc', size: 1 });
    assert.equal(missing.code, 'CONTENT_MISSING');
    assert.equal(missing.category, 'invalid-input');
    assert.equal(missing.message, 'the content of redis:v1 file a/b.yaml (abc) is not available');
  });
});
