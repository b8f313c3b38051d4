/**
 * Write endpoints (docs/server.md "HTTP API"), admin token required: registries, credentials (stored
 * encrypted, never returned), syncs; and the GitHub push webhook, authenticated by the HMAC-SHA256
 * signature of the registry's webhook secret instead of a token.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { LRUCache } from 'lru-cache';
import { DmError } from '../../../client/src/error.js';
import { nearest } from '../../../client/src/nearest.js';
import type { AddRegistryInput } from '../service.js';
import { commitShown } from '../source/directory.js';
import type { DeliveryCandidate } from '../webhook/check-delivery.js';
import { DeliveryChecker } from '../webhook/delivery-checker.js';
import { requireAdmin } from './access.js';
import type { Admission } from './admission.js';
import { boundedBody } from './bounded-body.js';
import { type AppEnv, accessOf, jsonBody } from './http.js';

function tooLarge(max: number) {
  return () => {
    throw new DmError('BODY_TOO_LARGE', `the request body is larger than ${max} bytes`, {
      category: 'limit',
    });
  };
}

function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new DmError('INVALID_JSON', `${key} must be a string`, {
      category: 'invalid-input',
      details: { field: key },
    });
  }
  return value;
}

/**
 * Refuses a field the endpoint does not read: a misspelt one (`organization` for `organisation`)
 * would otherwise be dropped, and the request do something else than asked (a public registry).
 */
function onlyFields(body: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (known.includes(key)) continue;
    const near = nearest(key, known);
    throw new DmError(
      'UNKNOWN_FIELD',
      `unknown field '${key}'${near ? ` (did you mean '${near}'?)` : ''}; this request takes ${known.join(', ')}`,
      { details: { field: key } },
    );
  }
}

const REGISTRY_FIELDS = [
  'source',
  'name',
  'branch',
  'path',
  'interval',
  'visibility',
  'organisation',
  'credential',
  'webhookSecret',
] as const;

export function writeRoutes(options: {
  maxBodyBytes: number;
  maxWebhookBytes: number;
  webhookAdmission: Admission;
}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: tooLarge(options.maxBodyBytes) });

  app.post('/registries', limit, async (c) => {
    requireAdmin(await accessOf(c));
    const body = await jsonBody(c);
    onlyFields(body, REGISTRY_FIELDS);
    const service = c.get('service');
    const interval = body.interval;
    if (interval !== undefined && interval !== null && typeof interval !== 'number') {
      throw new DmError('INVALID_JSON', 'interval must be a number of seconds', {
        category: 'invalid-input',
      });
    }
    const input: AddRegistryInput = {
      source: optionalString(body, 'source') ?? '',
      name: optionalString(body, 'name'),
      branch: optionalString(body, 'branch'),
      path: optionalString(body, 'path'),
      interval: typeof interval === 'number' ? interval : undefined,
      visibility: optionalString(body, 'visibility') as 'public' | 'private' | undefined,
      organisation: optionalString(body, 'organisation'),
      credential: optionalString(body, 'credential'),
      webhookSecret: optionalString(body, 'webhookSecret'),
    };
    const { row, created } = await service.register(input);
    void service.sync(row.id, 'manual');
    return c.json(await service.info(row, { viewer: { admin: true } }), created ? 201 : 200);
  });

  app.delete('/registries/:id{.+}', async (c) => {
    const access = await accessOf(c);
    requireAdmin(access);
    const service = c.get('service');
    const row = await service.find(c.req.param('id'), access);
    await service.remove(row.id);
    return c.body(null, 204);
  });

  app.post('/registries/:id{.+}/sync', async (c) => {
    const access = await accessOf(c);
    requireAdmin(access);
    const service = c.get('service');
    const row = await service.find(c.req.param('id'), access);
    const promise = service.sync(row.id, 'manual');
    if (c.req.query('wait') === 'false') {
      void promise;
      return c.json({ registry: row.name, status: 'queued' }, 202);
    }
    const outcome = await promise;
    return c.json({ ...outcome, commit: commitShown(outcome.commit) });
  });

  app.post('/credentials/:name', limit, async (c) => {
    requireAdmin(await accessOf(c));
    const body = await jsonBody(c);
    onlyFields(body, ['secret', 'kind']);
    const secret = optionalString(body, 'secret');
    if (!secret) throw new DmError('INVALID_JSON', 'secret is required', { category: 'invalid-input' });
    await c
      .get('service')
      .storeCredential(c.req.param('name'), secret, optionalString(body, 'kind') ?? 'token');
    return c.body(null, 204);
  });

  // Delivery ids seen recently (X-GitHub-Delivery): a replayed delivery syncs nothing.
  const deliveries = new LRUCache<string, true>({ max: 10_000 });
  // Unauthenticated work is bounded before the body is read (docs/server.md, "Webhooks"): a few
  // deliveries are read and checked at a time, a few more wait, the rest are refused with 503.
  const admission = options.webhookAdmission;
  const checker = new DeliveryChecker();
  app.post('/webhooks/github', async (c) => {
    const signature = c.req.header('x-hub-signature-256') ?? '';
    // Unsigned: refused before anything of the body is read.
    if (!signature) {
      throw new DmError('INVALID_SIGNATURE', 'the webhook delivery carries no X-Hub-Signature-256', {
        category: 'unauthorized',
      });
    }
    return admission.run(async () => {
      const service = c.get('service');
      const event = c.req.header('x-github-event') ?? '';
      const delivery = c.req.header('x-github-delivery') ?? '';
      const body = await boundedBody(c, options.maxWebhookBytes);
      if (body instanceof Response) return body;
      // GitHub registries with a secret, still sealed: the worker opens and tries only those of the
      // delivery's repository, so the request thread decrypts nothing.
      const { rows: registries, key } = await service.webhookRecipients();
      const candidates: DeliveryCandidate[] = registries.map((r, index) => ({
        index,
        source: r.source,
        sealedSecret: r.webhookSecret as string,
      }));
      const check = await checker.check(body, signature, candidates, key);
      if (check.kind === 'malformed') {
        throw new DmError('INVALID_JSON', check.message, { category: 'invalid-input' });
      }
      if (check.kind === 'unsigned') {
        throw new DmError(
          'INVALID_SIGNATURE',
          'the webhook signature does not verify for any registry of this repository',
          { category: 'unauthorized' },
        );
      }
      const matching = check.verified.map((i) => registries[i]!);
      const ref = check.ref;
      const repository = { default_branch: check.defaultBranch };
      if (event === 'ping') return c.json({ ok: true });
      if (event !== 'push') return c.json({ ignored: `event ${event}` });
      // A replay is known by its delivery id or by its body's digest: headers are not signed, so a
      // captured push sent again with another id, or with none, is still a duplicate
      // (docs/server.md, "Webhooks"). Hashed in the webhook worker once the signature verified (the
      // body's bytes went to the worker: the request thread has none of them).
      const digest = check.digest;
      const seen = [delivery, digest].find((key) => key !== '' && deliveries.has(key));
      if (seen !== undefined) return c.json({ duplicate: seen, syncing: [] });
      if (delivery) deliveries.set(delivery, true);
      deliveries.set(digest, true);
      const synced: string[] = [];
      for (const r of matching) {
        const branch = r.branch ?? (repository.default_branch as string | undefined);
        if (branch && ref === `refs/heads/${branch}`) {
          void service.sync(r.id, 'webhook');
          synced.push(r.name);
        }
      }
      return c.json({ syncing: synced }, synced.length ? 202 : 200);
    });
  });

  return app;
}
