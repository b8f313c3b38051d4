/**
 * Swapping a registry's index in one transaction (spec/server.md §1): readers (WAL) see the old
 * index or the new one, never a mix; a failure or a killed process before COMMIT leaves the old
 * one. Content is stored once by sha256; content no index references any more is removed in the
 * same transaction.
 */
import { eq, sql } from 'drizzle-orm';
import type { Finding } from '../../../client/src/registry/types.js';
import type { BuiltIndex } from '../indexer/build-index.js';
import type { Store } from './db.js';
import { files, findings, registries, templates, versionFiles, versions } from './schema.js';

export interface SwapMeta {
  registryId: number;
  commit: string;
  etag: string | null;
  now: number;
  /** Test hook: runs inside the transaction, after the old index is deleted and half the new one written. */
  midSwap?: () => void;
}

const CHUNK = 400;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface SwapResult {
  templateCount: number;
  versionCount: number;
  findingCount: number;
  generation: number;
}

export function swapIndex(store: Store, built: BuiltIndex, meta: SwapMeta): SwapResult {
  const { db, sqlite } = store;
  const insertFts = sqlite.prepare(
    'INSERT INTO templates_fts(rowid, name, collection, title, description, properties) VALUES (?, ?, ?, ?, ?, ?)',
  );
  return db.transaction((tx) => {
    const newFiles = new Map<string, { sha256: string; gitSha: string; size: number; content: Buffer }>();
    const addFile = (f: { sha256: string; gitSha: string; size: number; content?: Buffer }) => {
      if (f.content && !newFiles.has(f.sha256)) {
        newFiles.set(f.sha256, { sha256: f.sha256, gitSha: f.gitSha, size: f.size, content: f.content });
      }
    };
    for (const t of built.templates) for (const v of t.versions) for (const f of v.files) addFile(f);
    if (built.registryYaml) addFile(built.registryYaml);
    for (const chunk of chunks([...newFiles.values()], 100)) {
      tx.insert(files).values(chunk).onConflictDoNothing().run();
    }

    tx.delete(templates).where(eq(templates.registryId, meta.registryId)).run();
    tx.delete(findings).where(eq(findings.registryId, meta.registryId)).run();

    let versionCount = 0;
    const half = Math.floor(built.templates.length / 2);
    for (const [i, t] of built.templates.entries()) {
      if (i === half) meta.midSwap?.();
      const row = tx
        .insert(templates)
        .values({
          registryId: meta.registryId,
          collection: t.collection,
          name: t.name,
          latestVersion: t.latestVersion,
          title: t.title,
          description: t.description,
        })
        .returning({ id: templates.id })
        .get();
      insertFts.run(row.id, t.name, t.collection, t.title ?? '', t.description ?? '', t.properties.join(' '));
      for (const v of t.versions) {
        const vrow = tx
          .insert(versions)
          .values({
            templateId: row.id,
            registryId: meta.registryId,
            version: v.version,
            kind: v.kind,
            dir: v.dir,
            templateFile: v.templateFile,
            schemaFile: v.schemaFile,
            hasExample: v.hasExample,
            digest: v.digest,
            schemaJson: v.schema === null || v.schema === undefined ? null : JSON.stringify(v.schema),
          })
          .returning({ id: versions.id })
          .get();
        versionCount++;
        const rows = v.files.map((f) => ({
          versionId: vrow.id,
          path: f.path,
          sha256: f.sha256,
          size: f.size,
        }));
        for (const chunk of chunks(rows)) tx.insert(versionFiles).values(chunk).run();
      }
    }
    const findingRows = built.findings.map((f: Finding) => ({
      registryId: meta.registryId,
      code: f.code,
      severity: f.severity,
      path: f.path,
      message: f.message,
    }));
    for (const chunk of chunks(findingRows)) tx.insert(findings).values(chunk).run();

    const updated = tx
      .update(registries)
      .set({
        commit: meta.commit,
        etag: meta.etag,
        generation: sql`${registries.generation} + 1`,
        registryYamlSha256: built.registryYaml?.sha256 ?? null,
        templateCount: built.templates.length,
        versionCount,
        findingCount: built.findings.length,
      })
      .where(eq(registries.id, meta.registryId))
      .returning({ generation: registries.generation })
      .get();

    // Content nothing references any more.
    tx.run(sql`DELETE FROM files WHERE NOT EXISTS (SELECT 1 FROM version_files vf WHERE vf.sha256 = files.sha256)
      AND NOT EXISTS (SELECT 1 FROM registries r WHERE r.registry_yaml_sha256 = files.sha256)`);

    return {
      templateCount: built.templates.length,
      versionCount,
      findingCount: built.findings.length,
      generation: updated?.generation ?? 0,
    };
  });
}
