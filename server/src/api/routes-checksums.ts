/**
 * The checksum log's endpoints and the admin's acceptance of changed content
 * (docs/integrity-store.md §4): the signed checkpoint, a version's record with its inclusion
 * proof, consistency proofs between two signed sizes, `POST …/versions/{ref}/accept` and the
 * audit listing of acceptances `GET /registries/{id}/audit`. Proofs
 * are only given up to the latest signed size, so a client never sees an unsigned tree. A record
 * of a private registry is answered only to a caller who may read it (the leaf hashes alone
 * name nothing).
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DmError } from '../../../client/src/error.js';
import {
  encodeProof,
  encodeRecord,
  integrityError,
  MerkleLog,
  parseRecordKey,
} from '../../../client/src/integrity/index.js';
import { MAX_AUDIT_ENTRIES } from '../store/quarantine.js';
import { hashToken } from '../store/secrets.js';
import { bearerToken, requireAdmin } from './access.js';
import { type AppEnv, accessOf, intParam, jsonBody } from './http.js';

/** A size query parameter: a whole number from 0 to 2^53 − 1, or CHECKSUM_RANGE_INVALID. */
function sizeParam(value: string | undefined, name: string): number {
  if (value === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw integrityError(
      'CHECKSUM_RANGE_INVALID',
      `${name} must be a tree size (a whole number from 0), not '${String(value).slice(0, 40)}'`,
    );
  }
  return Number(value);
}

export function checksumRoutes(options: { maxBodyBytes: number }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get('/checksums/latest', async (c) => {
    const { note } = await c.get('service').checksums.checkpoint();
    return c.body(note, 200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache' });
  });

  app.get('/checksums/lookup/*', async (c) => {
    const service = c.get('service');
    // Who asks first: a token that is not valid is 401 whatever the key names, so a bad token
    // tells a private registry's key from a missing one no more than no token does.
    const access = await accessOf(c);
    const raw = c.req.path.replace(/^.*?\/checksums\/lookup\//, '');
    let key: string;
    try {
      key = decodeURIComponent(raw);
    } catch {
      key = raw;
    }
    const { template, version } = parseRecordKey(key);
    const reads = service.data.reads;
    // The same reads for every key (the record, the registries), then one decision: a record is
    // answered only to a caller who may read the registry that recorded it; a record of a
    // registry deleted since is answered to admins only, since what it was can no longer be told
    // (docs/integrity-store.md §4).
    const [row, registries] = await Promise.all([reads.newestRecord(template, version), service.all()]);
    const recordedBy = row && registries.find((r) => r.id === row.registryId);
    const readable = row !== undefined && (recordedBy ? access.canRead(recordedBy) : access.admin);
    if (!row || !readable) {
      throw new DmError('CHECKSUM_RECORD_NOT_FOUND', `the checksum log has no record of ${key}`, {
        category: 'not-found',
        details: { key },
      });
    }
    const checkpoint = await service.checksums.checkpoint();
    const log = await MerkleLog.open(reads.logHashes());
    const proof = await log.inclusionProof(row.logIndex, checkpoint.size);
    const record = encodeRecord({
      template,
      version,
      digest: row.digest,
      ...(row.supersedes === null ? {} : { supersedes: row.supersedes }),
    });
    return c.json({ record, index: row.logIndex, proof: encodeProof(proof), checkpoint: checkpoint.note });
  });

  app.get('/checksums/consistency', async (c) => {
    const service = c.get('service');
    const from = sizeParam(c.req.query('from'), 'from');
    const to = sizeParam(c.req.query('to'), 'to');
    const checkpoint = await service.checksums.checkpoint();
    if (to > checkpoint.size || from > to) {
      throw integrityError(
        'CHECKSUM_RANGE_INVALID',
        `a consistency proof goes from a smaller size to a larger one up to the latest signed size ${checkpoint.size}, not from ${from} to ${to}`,
      );
    }
    const log = await MerkleLog.open(service.data.reads.logHashes());
    return c.json({ proof: encodeProof(await log.consistencyProof(from, to)) });
  });

  app.post(
    '/registries/:id{[^/]+}/versions/:ref{.+}/accept',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: () => {
        throw new DmError('BODY_TOO_LARGE', `the request body is larger than ${options.maxBodyBytes} bytes`, {
          category: 'limit',
        });
      },
    }),
    async (c) => {
      const access = await accessOf(c);
      requireAdmin(access);
      const service = c.get('service');
      const row = await service.find(c.req.param('id'), access);
      const body = await jsonBody(c);
      const authorization = c.req.header('authorization') ?? '';
      const accepted = await service.checksums.accept({
        registryId: row.id,
        registry: row.name,
        ref: decodeURIComponent(c.req.param('ref')),
        reason: body.reason,
        // The token, by a prefix of its hash (the token list's ids name the same tokens).
        by: `token:${hashToken(bearerToken(authorization)).slice(0, 12)}`,
      });
      service.catalog.invalidate();
      // The next swap serves the accepted content.
      void service.sync(row.id, 'manual');
      return c.json({
        template: accepted.template,
        version: accepted.version,
        oldDigest: accepted.oldDigest,
        newDigest: accepted.newDigest,
        acceptedAt: new Date(accepted.acceptedAt).toISOString(),
        acceptedBy: accepted.acceptedBy,
        reason: accepted.reason,
        logIndex: accepted.logIndex,
      });
    },
  );

  // The audit trail of acceptances (admin only: who accepted is an admin token's id).
  app.get('/registries/:id{[^/]+}/audit', async (c) => {
    const access = await accessOf(c);
    requireAdmin(access);
    const service = c.get('service');
    const row = await service.find(c.req.param('id'), access);
    const limit = intParam(c, 'limit', 100, 1, MAX_AUDIT_ENTRIES);
    const entries = await service.data.checksums.acceptances(row.id, limit);
    return c.json({
      registry: row.name,
      acceptances: entries.map((a) => ({ ...a, acceptedAt: new Date(a.acceptedAt).toISOString() })),
    });
  });

  return app;
}
