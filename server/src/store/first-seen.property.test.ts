/**
 * Properties of the first-seen decision (docs/integrity-store.md §2), over random indexes, first-
 * seen records and served rows: after `keepFirstSeen`, no version of the index has a digest other
 * than its first-seen one (nothing new is ever served); every version never seen is recorded once;
 * `changedFiles` names exactly the paths whose content differs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { BuiltIndex, IndexedFile } from '../indexer/build-index.js';
import {
  canonicalTemplate,
  changedFiles,
  keepFirstSeen,
  planFirstSeen,
  type ServedVersion,
  servedKey,
} from './first-seen.js';

const REGISTRY = 'github.com/acme/templates';
const hex = (n: number) => n.toString(16).padStart(64, '0');
const digestOf = (n: number) => `sha256:${hex(n)}`;

const files = fc.uniqueArray(
  fc.record({ path: fc.constantFrom('a.jinja', 'b.yaml', 'c/d.txt', 'e'), sha: fc.nat(5) }),
  {
    selector: (f) => f.path,
    maxLength: 4,
  },
);

/** A version: its content (digest) now, what was first seen (none, same, other), whether its first-seen rows are served. */
const versionSpec = fc.record({
  version: fc.constantFrom('v1.0.0', 'v1.0.1', 'v1.1', 'v2.0.0', 'v2.0.0-rc.1'),
  now: fc.nat(3),
  first: fc.option(fc.nat(3), { nil: undefined }),
  served: fc.boolean(),
  files,
});

const world = fc.uniqueArray(
  fc.record({
    name: fc.constantFrom('redis', 'postgres', 'web'),
    versions: fc.uniqueArray(versionSpec, { selector: (v) => v.version, minLength: 1, maxLength: 4 }),
  }),
  { selector: (t) => t.name, maxLength: 3 },
);

function indexedFiles(list: { path: string; sha: number }[]): IndexedFile[] {
  return list.map((f) => ({ path: f.path, sha256: hex(f.sha), gitSha: hex(f.sha).slice(0, 40), size: 1 }));
}

describe('first-seen decision', () => {
  it('keepFirstSeen() leaves no version whose digest differs from its first-seen digest', () => {
    fc.assert(
      fc.property(world, (templates) => {
        const built: BuiltIndex = {
          findings: [],
          registryYaml: null,
          templates: templates.map((t) => ({
            collection: '',
            name: t.name,
            latestVersion: t.versions[0]!.version,
            title: `new ${t.name}`,
            description: null,
            properties: [],
            versions: t.versions.map((v) => ({
              version: v.version,
              kind: 'jinja' as const,
              dir: `${t.name}/${v.version}`,
              templateFile: 'a.jinja',
              schemaFile: null,
              hasExample: false,
              digest: digestOf(v.now),
              schema: { info: { title: `new ${t.name}` } },
              files: indexedFiles(v.files),
            })),
          })),
        };
        const firstSeen = new Map<string, string>();
        const served = new Map<string, { id: number; digest: string; treeSha: null }>();
        const servedRows = new Map<string, ServedVersion>();
        let id = 0;
        for (const t of templates) {
          for (const v of t.versions) {
            if (v.first === undefined) continue;
            firstSeen.set(`${canonicalTemplate(REGISTRY, '', t.name)}@${v.version}`, digestOf(v.first));
            if (!v.served) continue;
            served.set(servedKey('', t.name, v.version), {
              id: ++id,
              digest: digestOf(v.first),
              treeSha: null,
            });
            servedRows.set(servedKey('', t.name, v.version), {
              kind: 'jinja',
              dir: `${t.name}/${v.version}`,
              templateFile: 'a.jinja',
              schemaFile: null,
              hasExample: false,
              digest: digestOf(v.first),
              treeSha: null,
              schemaJson: JSON.stringify({ info: { title: `old ${t.name}` } }),
              files: [],
            });
          }
        }
        const plan = planFirstSeen(
          built,
          { served, firstSeen, open: new Map() },
          {
            registryId: 1,
            registry: REGISTRY,
            now: 0,
          },
        );
        // Every version never seen is recorded, once; every other one is not.
        const unseen = templates.flatMap((t) =>
          t.versions
            .filter((v) => v.first === undefined)
            .map((v) => `${canonicalTemplate(REGISTRY, '', t.name)}@${v.version}`),
        );
        assert.deepEqual(plan.records.map((r) => `${r.template}@${r.version}`).sort(), unseen.sort());
        keepFirstSeen(
          built,
          { registry: REGISTRY },
          plan.quarantinedKeys,
          (c, t, v) => servedRows.get(servedKey(c, t, v)),
          plan.quarantined,
        );
        for (const t of built.templates) {
          for (const v of t.versions) {
            const first = firstSeen.get(`${canonicalTemplate(REGISTRY, '', t.name)}@${v.version}`);
            assert.ok(
              first === undefined || first === v.digest,
              `${t.name}@${v.version} serves ${v.digest}, first ${first}`,
            );
          }
          // The template's search info comes from a version it still serves.
          const latest = t.versions.find((v) => v.version === t.latestVersion);
          assert.ok(latest, `${t.name}: latest ${t.latestVersion} is not served`);
          const quarantinedLatest = plan.quarantinedKeys.has(
            `${canonicalTemplate(REGISTRY, '', t.name)}@${latest.version}`,
          );
          if (quarantinedLatest) assert.equal(t.title, `old ${t.name}`);
        }
        assert.equal(plan.quarantined.length, plan.quarantinedKeys.size);
      }),
    );
  });

  it('changedFiles() names exactly the paths whose content differs, with both hashes', () => {
    fc.assert(
      fc.property(files, files, (a, b) => {
        const before = indexedFiles(a);
        const after = indexedFiles(b);
        const changes = changedFiles(before, after);
        const old = new Map(before.map((f) => [f.path, f.sha256]));
        const now = new Map(after.map((f) => [f.path, f.sha256]));
        for (const path of new Set([...old.keys(), ...now.keys()])) {
          const change = changes.find((c) => c.path === path);
          if ((old.get(path) ?? null) === (now.get(path) ?? null)) assert.equal(change, undefined);
          else assert.deepEqual(change, { path, old: old.get(path) ?? null, new: now.get(path) ?? null });
        }
        assert.deepEqual(
          changes.map((c) => c.path),
          [...changes.map((c) => c.path)].sort(),
        );
      }),
    );
  });
});
