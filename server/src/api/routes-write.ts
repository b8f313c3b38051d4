/**
 * Write endpoints (docs/server.md "HTTP API"), admin token required: registries, credentials (stored
 * encrypted, never returned), syncs; and the GitHub push webhook, authenticated by the HMAC-SHA256
 * signature of the registry's webhook secret instead of a token.
 */
import { createHash } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { LRUCache } from 'lru-cache';
import { DmError } from '../../../client/src/error.js';
import type { AddRegistryInput } from '../service.js';
import { commitShown } from '../source/directory.js';
import { requireAdmin } from './access.js';
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

export function writeRoutes(options: { maxBodyBytes: number; maxWebhookBytes: number }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const limit = bodyLimit({ maxSize: options.maxBodyBytes, onError: tooLarge(options.maxBodyBytes) });

  app.post('/registries', limit, async (c) => {
    requireAdmin(await accessOf(c));
    const body = await jsonBody(c);
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
    const secret = optionalString(body, 'secret');
    if (!secret) throw new DmError('INVALID_JSON', 'secret is required', { category: 'invalid-input' });
    await c
      .get('service')
      .storeCredential(c.req.param('name'), secret, optionalString(body, 'kind') ?? 'token');
    return c.body(null, 204);
  });

  // Delivery ids seen recently (X-GitHub-Delivery): a replayed delivery syncs nothing.
  const deliveries = new LRUCache<string, true>({ max: 10_000 });
  app.post(
    '/webhooks/github',
    bodyLimit({ maxSize: options.maxWebhookBytes, onError: tooLarge(options.maxWebhookBytes) }),
    async (c) => {
      const service = c.get('service');
      const event = c.req.header('x-github-event') ?? '';
      const signature = c.req.header('x-hub-signature-256') ?? '';
      const delivery = c.req.header('x-github-delivery') ?? '';
      const text = await c.req.text();
      // The signature is checked on the raw bytes, against every GitHub registry with a webhook
      // secret, before anything of the body is parsed.
      const verified = [];
      if (signature) {
        for (const r of await service.all()) {
          if (r.sourceType !== 'github' || !r.webhookSecret) continue;
          let secret: string | null = null;
          try {
            secret = service.webhookSecretOf(r);
          } catch {
            continue; // unreadable after a key change: this registry cannot verify anything
          }
          if (secret && (await verify(secret, text, signature).catch(() => false))) verified.push(r);
        }
      }
      if (verified.length === 0) {
        throw new DmError(
          'INVALID_SIGNATURE',
          'the webhook signature does not verify for any registry of this server',
          {
            category: 'unauthorized',
          },
        );
      }
      let payload: unknown;
      try {
        payload = JSON.parse(text);
      } catch {
        throw new DmError('INVALID_JSON', 'the webhook body is not valid JSON', {
          category: 'invalid-input',
        });
      }
      const repository = (payload as { repository?: unknown } | null)?.repository as
        | { full_name?: unknown; default_branch?: unknown }
        | undefined;
      const ref = (payload as { ref?: unknown } | null)?.ref;
      if (
        !payload ||
        typeof payload !== 'object' ||
        !repository ||
        typeof repository !== 'object' ||
        typeof repository.full_name !== 'string' ||
        (repository.default_branch !== undefined && typeof repository.default_branch !== 'string') ||
        (ref !== undefined && typeof ref !== 'string')
      ) {
        throw new DmError(
          'INVALID_JSON',
          'the webhook body must be an object with repository.full_name (a string)',
          { category: 'invalid-input' },
        );
      }
      const fullName = repository.full_name.toLowerCase();
      const matching = verified.filter((r) => r.source.toLowerCase().endsWith(`/${fullName}`));
      if (matching.length === 0) {
        throw new DmError(
          'INVALID_SIGNATURE',
          'the webhook signature does not verify for any registry of this repository',
          { category: 'unauthorized' },
        );
      }
      if (event === 'ping') return c.json({ ok: true });
      if (event !== 'push') return c.json({ ignored: `event ${event}` });
      // A replay is known by its delivery id or by its body's digest: headers are not signed, so a
      // captured push sent again with another id, or with none, is still a duplicate
      // (docs/server.md, "Webhooks").
      const digest = `sha256:${createHash('sha256').update(text).digest('hex')}`;
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
    },
  );

  return app;
}
