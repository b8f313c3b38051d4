/**
 * `GET /api/v1/openapi.json`: the API described in OpenAPI 3.1 (docs/server.md "HTTP API"). Written by
 * hand next to shapes.ts; test/server/routes.test.ts checks both directions: every route the app
 * serves (the HTML pages aside) is described here, and every path and method described is served.
 */
import { MANAGER_PATHS, MANAGER_SCHEMAS } from '../manager/openapi.js';

const error = { $ref: '#/components/responses/Error' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const templatePath = '/api/v1/templates/{host}/{owner}/{repo}/{template}';
const pathParams = ['host', 'owner', 'repo', 'template'].map((name) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
}));
const versionParam = { name: 'version', in: 'path', required: true, schema: { type: 'string' } };
const immutable = {
  description: 'Content of an exact version; strong ETag, immutable caching, 304 on If-None-Match',
  headers: { ETag: { schema: { type: 'string' } }, 'Cache-Control': { schema: { type: 'string' } } },
};
const admin = [{ bearer: [] }];
/** An admin's acceptance of changed content: the accept's answer and an audit listing's entry. */
const acceptance = {
  type: 'object',
  required: [
    'template',
    'version',
    'oldDigest',
    'newDigest',
    'acceptedAt',
    'acceptedBy',
    'reason',
    'logIndex',
  ],
  properties: {
    template: { type: 'string' },
    version: { type: 'string' },
    oldDigest: { type: 'string' },
    newDigest: { type: 'string' },
    acceptedAt: { type: 'string', format: 'date-time' },
    acceptedBy: { type: 'string' },
    reason: { type: 'string' },
    logIndex: { type: 'integer' },
  },
};
/** docs/integrity-store.md §4: an open quarantine (the first-seen content stays served). */
const quarantine = {
  type: 'object',
  required: ['since', 'newDigest', 'changedFiles'],
  description: 'The source changed this version after it was first seen; the first-seen content is served',
  properties: {
    since: { type: 'string' },
    newDigest: { type: 'string' },
    changedFiles: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'old', 'new'],
        properties: {
          path: { type: 'string' },
          old: { type: ['string', 'null'] },
          new: { type: ['string', 'null'] },
        },
      },
    },
  },
};

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'dm-registry',
    version: '1',
    description:
      'Template registry server: registries, search, resolution with patch float, immutable content. A collection segment may precede {template} in template paths.',
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    responses: {
      Error: {
        description: 'Error',
        ...json({
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                details: { type: 'object' },
              },
            },
          },
        }),
      },
    },
    schemas: {
      ...MANAGER_SCHEMAS,
      File: {
        type: 'object',
        required: ['path', 'size', 'sha256'],
        properties: { path: { type: 'string' }, size: { type: 'integer' }, sha256: { type: 'string' } },
      },
      Resolution: {
        type: 'object',
        required: [
          'reference',
          'resolved',
          'registry',
          'collection',
          'template',
          'version',
          'commit',
          'kind',
          'digest',
          'files',
        ],
        properties: {
          reference: { type: 'string' },
          resolved: { type: 'string' },
          registry: { type: 'string' },
          collection: { type: 'string' },
          template: { type: 'string' },
          version: { type: 'string' },
          commit: {
            type: 'string',
            description: "the registry's commit; '' for a plain directory, which has none",
          },
          kind: { enum: ['jinja', 'python', 'blueprint'] },
          templateFile: { type: 'string' },
          schemaFile: { type: ['string', 'null'] },
          digest: { type: 'string' },
          files: { type: 'array', items: ref('File') },
          schema: {},
          removedUpstream: { const: true, description: "a mirror's upstream no longer serves this version" },
          quarantined: quarantine,
        },
      },
      Registry: {
        type: 'object',
        required: ['id', 'name', 'source', 'visibility', 'sync', 'counts'],
        properties: {
          id: { type: 'integer' },
          name: { type: 'string' },
          source: { type: 'object' },
          visibility: { enum: ['public', 'private'] },
          organisation: { type: ['string', 'null'] },
          interval: { type: ['integer', 'null'] },
          commit: {
            type: ['string', 'null'],
            description:
              "the registry's commit; '' for a plain directory, which has none; null before its first sync",
          },
          sync: { type: 'object' },
          counts: { type: 'object' },
          upstream: {
            type: 'object',
            description:
              'Mirrored registries: the upstream state (ok, unreachable since, unauthorized since, rate-limited until) and staleness',
            required: ['url', 'state', 'checkedAt', 'staleSeconds', 'removedUpstream', 'digestMismatches'],
            properties: {
              url: { type: 'string' },
              state: { enum: ['ok', 'unreachable', 'unauthorized', 'rate-limited'] },
              since: { type: 'string' },
              until: { type: 'string' },
              detail: { type: 'string' },
              checkedAt: { type: ['string', 'null'] },
              staleSeconds: { type: ['integer', 'null'] },
              removedUpstream: { type: 'integer' },
              digestMismatches: { type: 'integer' },
            },
          },
          findings: { type: 'array', items: { type: 'object' } },
          quarantined: {
            type: 'array',
            items: {
              ...quarantine,
              required: ['template', 'version', ...quarantine.required],
              properties: {
                template: { type: 'string' },
                version: { type: 'string' },
                ...quarantine.properties,
              },
            },
          },
        },
      },
    },
  },
  paths: {
    '/api/v1/registries': {
      get: { summary: 'Registries visible to the caller', responses: { 200: json({ type: 'object' }) } },
      post: {
        summary: 'Add a registry (admin)',
        security: admin,
        requestBody: json({
          type: 'object',
          required: ['source'],
          properties: {
            source: { type: 'string' },
            name: { type: 'string' },
            branch: { type: 'string' },
            path: { type: 'string' },
            interval: { type: 'integer' },
            visibility: { enum: ['public', 'private'] },
            organisation: {
              type: 'string',
              description: 'the organisation it belongs to; its visibility is then private unless given',
            },
            credential: { type: 'string' },
            webhookSecret: { type: 'string' },
          },
        }),
        // 200: a registry only a pull-through created, now mirrored whole (docs/mirroring.md).
        responses: {
          200: json(ref('Registry')),
          201: json(ref('Registry')),
          400: error,
          401: error,
          409: error,
        },
      },
    },
    '/api/v1/registries/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { summary: 'A registry with its findings', responses: { 200: json(ref('Registry')), 404: error } },
      delete: {
        summary: 'Remove a registry (admin)',
        security: admin,
        responses: { 204: { description: 'Removed' }, 404: error },
      },
    },
    '/api/v1/registries/{id}/versions': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary:
          'Every version of a registry with its digest (what a mirror syncs from); ETag, 304 to If-None-Match',
        responses: {
          200: json({
            type: 'object',
            required: ['registry', 'commit', 'versions'],
            properties: {
              registry: { type: 'string' },
              commit: {
                type: ['string', 'null'],
                description:
                  "the registry's commit; '' for a plain directory, which has none; null before its first sync",
              },
              versions: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['collection', 'template', 'version', 'digest'],
                  properties: {
                    collection: { type: 'string' },
                    template: { type: 'string' },
                    version: { type: 'string' },
                    digest: { type: 'string' },
                  },
                },
              },
            },
          }),
          304: { description: 'Not modified' },
          404: error,
        },
      },
    },
    '/api/v1/registries/{id}/sync': {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'wait', in: 'query', schema: { type: 'boolean' } },
      ],
      post: {
        summary: 'Sync now (admin)',
        security: admin,
        responses: { 200: json({ type: 'object' }), 202: json({ type: 'object' }) },
      },
    },
    '/api/v1/registries/{id}/versions/{ref}/accept': {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        {
          name: 'ref',
          in: 'path',
          required: true,
          description: '[{collection}/]{template}@{version}',
          schema: { type: 'string' },
        },
      ],
      post: {
        summary: "Accept a quarantined version's changed content (admin; audited, logged as superseding)",
        security: admin,
        requestBody: json({
          type: 'object',
          required: ['reason'],
          properties: { reason: { type: 'string', minLength: 1, maxLength: 1000 } },
        }),
        responses: {
          200: json(acceptance),
          400: error,
          401: error,
          403: error,
          404: error,
        },
      },
    },
    '/api/v1/registries/{id}/audit': {
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
      ],
      get: {
        summary:
          "The registry's acceptances of changed content, newest first (admin; docs/integrity-store.md §4)",
        security: admin,
        responses: {
          200: json({
            type: 'object',
            required: ['registry', 'acceptances'],
            properties: {
              registry: { type: 'string' },
              acceptances: {
                type: 'array',
                items: acceptance,
              },
            },
          }),
          400: error,
          401: error,
          403: error,
          404: error,
        },
      },
    },
    '/api/v1/checksums/latest': {
      get: {
        summary: "The checksum log's latest signed checkpoint (docs/integrity.md §3.2)",
        responses: {
          200: { description: 'A signed note', content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      },
    },
    '/api/v1/checksums/lookup/{host}/{owner}/{repo}/{template}@{version}': {
      parameters: [...pathParams, versionParam],
      get: {
        summary: "A version's newest record with its inclusion proof in the latest checkpoint",
        responses: {
          200: json({
            type: 'object',
            required: ['record', 'index', 'proof', 'checkpoint'],
            properties: {
              record: { type: 'string' },
              index: { type: 'integer' },
              proof: { type: 'array', items: { type: 'string' } },
              checkpoint: { type: 'string' },
            },
          }),
          400: error,
          404: error,
        },
      },
    },
    '/api/v1/checksums/consistency': {
      parameters: [
        { name: 'from', in: 'query', required: true, schema: { type: 'integer' } },
        { name: 'to', in: 'query', required: true, schema: { type: 'integer' } },
      ],
      get: {
        summary: 'A consistency proof between two tree sizes, up to the latest signed one',
        responses: {
          200: json({
            type: 'object',
            required: ['proof'],
            properties: { proof: { type: 'array', items: { type: 'string' } } },
          }),
          400: error,
        },
      },
    },
    '/api/v1/registries/{id}/syncs': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'The last 100 syncs, newest first (admin, or a read token for the registry)',
        security: admin,
        responses: {
          200: json({
            type: 'object',
            required: ['syncs'],
            properties: {
              syncs: {
                type: 'array',
                items: {
                  type: 'object',
                  required: [
                    'id',
                    'trigger',
                    'status',
                    'startedAt',
                    'finishedAt',
                    'replica',
                    'apiRequests',
                    'error',
                  ],
                  properties: {
                    id: { type: 'integer' },
                    trigger: { type: 'string' },
                    status: { type: 'string' },
                    startedAt: { type: 'string', format: 'date-time' },
                    finishedAt: { type: ['string', 'null'], format: 'date-time' },
                    replica: { type: ['string', 'null'] },
                    apiRequests: { type: 'integer' },
                    error: { type: ['string', 'null'] },
                  },
                },
              },
            },
          }),
          401: error,
          404: error,
        },
      },
    },
    '/api/v1/credentials/{name}': {
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
      post: {
        summary: 'Store a credential (admin); never returned',
        security: admin,
        requestBody: json({
          type: 'object',
          required: ['secret'],
          properties: { secret: { type: 'string' }, kind: { type: 'string' } },
        }),
        responses: { 204: { description: 'Stored' } },
      },
    },
    '/api/v1/webhooks/github': {
      post: {
        summary: 'GitHub push webhook (X-Hub-Signature-256)',
        responses: { 200: json({}), 202: json({}), 401: error },
      },
    },
    '/api/v1/search': {
      get: {
        summary: 'Full-text search with facets',
        parameters: ['q', 'collection', 'registry', 'page', 'limit'].map((name) => ({
          name,
          in: 'query',
          schema: { type: 'string' },
        })),
        responses: { 200: json({ type: 'object' }), 400: error },
      },
    },
    '/api/v1/resolve': {
      get: {
        summary: 'Resolve one reference (patch float)',
        parameters: [{ name: 'ref', in: 'query', required: true, schema: { type: 'string' } }],
        responses: {
          200: json(ref('Resolution')),
          304: { description: 'Not modified (the ETag of a 200 in If-None-Match)' },
          400: error,
          404: error,
        },
      },
      post: {
        summary: 'Resolve many references; failures per reference',
        requestBody: json({
          type: 'object',
          required: ['refs'],
          properties: { refs: { type: 'array', items: { type: 'string' } } },
        }),
        responses: { 200: json({ type: 'object' }), 400: error },
      },
    },
    [templatePath]: {
      parameters: pathParams,
      get: {
        summary: 'A template with all its versions, newest first',
        responses: {
          200: json({
            type: 'object',
            required: ['registry', 'collection', 'name', 'reference', 'latestVersion', 'versions'],
            properties: {
              registry: { type: 'string' },
              collection: { type: 'string' },
              name: { type: 'string' },
              reference: { type: 'string' },
              commit: {
                type: ['string', 'null'],
                description:
                  "the registry's commit; '' for a plain directory, which has none; null before its first sync",
              },
              latestVersion: { type: ['string', 'null'] },
              title: { type: ['string', 'null'] },
              description: { type: ['string', 'null'] },
              versions: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['version', 'kind', 'digest', 'firstSeenAt'],
                  properties: {
                    version: { type: 'string' },
                    kind: { enum: ['jinja', 'python', 'blueprint'] },
                    digest: { type: 'string' },
                    templateFile: { type: 'string' },
                    schemaFile: { type: ['string', 'null'] },
                    hasExample: { type: 'boolean' },
                    firstSeenAt: {
                      type: ['string', 'null'],
                      format: 'date-time',
                      description:
                        'when this server first saw the version (its first-seen record); null if never recorded',
                    },
                    removedUpstream: { const: true },
                    quarantined: quarantine,
                  },
                },
              },
            },
          }),
          404: error,
        },
      },
    },
    [`${templatePath}/versions/{version}/files`]: {
      parameters: [
        ...pathParams,
        versionParam,
        {
          name: 'limit',
          in: 'query',
          description: 'files per page, 1 to 1000 (default 100)',
          schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        },
        {
          name: 'continue',
          in: 'query',
          description: "the previous page's `continue`: the page after it",
          schema: { type: 'string' },
        },
      ],
      get: {
        summary: "A version's files, a page at a time in path order",
        responses: {
          200: json({
            type: 'object',
            required: ['total', 'files'],
            properties: {
              total: { type: 'integer', description: 'files in the version' },
              files: { type: 'array', items: { $ref: '#/components/schemas/File' } },
              continue: { type: 'string', description: 'present while more pages follow' },
            },
          }),
          400: error,
          404: error,
        },
      },
    },
    [`${templatePath}/versions/{version}/files/{path}`]: {
      parameters: [
        ...pathParams,
        versionParam,
        { name: 'path', in: 'path', required: true, schema: { type: 'string' } },
      ],
      get: {
        summary: 'A file of an exact version',
        responses: { 200: immutable, 304: { description: 'Not modified' }, 404: error },
      },
    },
    [`${templatePath}/versions/{version}/schema`]: {
      parameters: [...pathParams, versionParam],
      get: {
        summary: 'The parsed schema (JSON)',
        responses: { 200: immutable, 304: { description: 'Not modified' }, 404: error },
      },
    },
    [`${templatePath}/versions/{version}/archive.tar.gz`]: {
      parameters: [...pathParams, versionParam],
      get: {
        summary: 'The version directory as .tar.gz',
        responses: { 200: immutable, 304: { description: 'Not modified' }, 404: error },
      },
    },
    '/healthz': { get: { summary: 'Process is up', responses: { 200: json({}) } } },
    '/readyz': {
      get: { summary: 'Database reachable, migrations applied', responses: { 200: json({}), 503: error } },
    },
    '/metrics': { get: { summary: 'Prometheus metrics', responses: { 200: { description: 'text/plain' } } } },
    '/api/v1/openapi.json': { get: { summary: 'This description', responses: { 200: json({}) } } },
    ...MANAGER_PATHS,
  },
} as const;
