/**
 * Write endpoints (spec/server.md §2), admin token required: registries, credentials (stored
 * encrypted, never returned), syncs; and the GitHub push webhook, authenticated by the HMAC-SHA256
 * signature of the registry's webhook secret instead of a token.
 */
import { verify } from '@octokit/webhooks-methods';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DmError } from '../../../client/src/error.js';
import type { AddRegistryInput } from '../service.js';
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
    requireAdmin(accessOf(c));
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
      credential: optionalString(body, 'credential'),
      webhookSecret: optionalString(body, 'webhookSecret'),
    };
    const row = service.add(input);
    void service.sync(row.id, 'manual');
    return c.json(service.info(row, false), 201);
  });

  app.delete('/registries/:id{.+}', (c) => {
    const access = accessOf(c);
    requireAdmin(access);
    const service = c.get('service');
    const row = service.find(c.req.param('id'), access);
    service.remove(row.id);
    return c.body(null, 204);
  });

  app.post('/registries/:id{.+}/sync', async (c) => {
    const access = accessOf(c);
    requireAdmin(access);
    const service = c.get('service');
    const row = service.find(c.req.param('id'), access);
    const promise = service.sync(row.id, 'manual');
    if (c.req.query('wait') === 'false') {
      void promise;
      return c.json({ registry: row.name, status: 'queued' }, 202);
    }
    return c.json(await promise);
  });

  app.post('/credentials/:name', limit, async (c) => {
    requireAdmin(accessOf(c));
    const body = await jsonBody(c);
    const secret = optionalString(body, 'secret');
    if (!secret) throw new DmError('INVALID_JSON', 'secret is required', { category: 'invalid-input' });
    c.get('service').storeCredential(c.req.param('name'), secret, optionalString(body, 'kind') ?? 'token');
    return c.body(null, 204);
  });

  app.post(
    '/webhooks/github',
    bodyLimit({ maxSize: options.maxWebhookBytes, onError: tooLarge(options.maxWebhookBytes) }),
    async (c) => {
      const service = c.get('service');
      const event = c.req.header('x-github-event') ?? '';
      const signature = c.req.header('x-hub-signature-256') ?? '';
      const text = await c.req.text();
      let payload: { ref?: string; repository?: { full_name?: string; default_branch?: string } };
      try {
        payload = JSON.parse(text);
      } catch {
        throw new DmError('INVALID_JSON', 'the webhook body is not valid JSON', {
          category: 'invalid-input',
        });
      }
      const fullName = payload.repository?.full_name?.toLowerCase();
      const candidates = service
        .all()
        .filter(
          (r) => r.sourceType === 'github' && fullName && r.source.toLowerCase().endsWith(`/${fullName}`),
        );
      const verified = [];
      for (const r of candidates) {
        const secret = service.webhookSecretOf(r);
        if (secret && signature && (await verify(secret, text, signature).catch(() => false)))
          verified.push(r);
      }
      if (verified.length === 0) {
        throw new DmError(
          'INVALID_SIGNATURE',
          'the webhook signature does not verify for any registry of this repository',
          {
            category: 'unauthorized',
          },
        );
      }
      if (event === 'ping') return c.json({ ok: true });
      if (event !== 'push') return c.json({ ignored: `event ${event}` });
      const synced: string[] = [];
      for (const r of verified) {
        const branch = r.branch ?? payload.repository?.default_branch;
        if (branch && payload.ref === `refs/heads/${branch}`) {
          void service.sync(r.id, 'webhook');
          synced.push(r.name);
        }
      }
      return c.json({ syncing: synced }, synced.length ? 202 : 200);
    },
  );

  return app;
}
