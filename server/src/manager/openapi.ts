/**
 * The Deployment Manager API in the server's OpenAPI document (docs/manager.md): its paths and
 * schemas, spread into server/src/api/openapi.ts. Written by hand next to shapes.ts; the tests
 * validate the answers against these schemas.
 */
const error = { $ref: '#/components/responses/Error' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const bearer = [{ bearer: [] }];
const str = { type: 'string' };
const strOrNull = { type: ['string', 'null'] };
const nameParam = { name: 'name', in: 'path', required: true, schema: str };
const wait = {
  name: 'wait',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
  description: 'answer 200 when the operation has finished instead of 202 at once',
};
const dryRun = {
  name: 'dryRun',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
  description:
    'answer 200 with what the change would do (dm deploy --dry-run: creates, updates, prunes), applying nothing',
};
/** The answers of a change: `errors` are the same for create, update and delete. */
const changeErrors = { 400: error, 401: error, 403: error, 404: error, 409: error, 422: error };
const accepted = {
  200: {
    description: 'The finished operation (?wait=true), or the plan (?dryRun=true)',
    ...json({ oneOf: [ref('Operation'), ref('DryRun')] }),
  },
  202: { description: 'The operation, accepted', ...json(ref('Operation')) },
  ...changeErrors,
};
const acceptedDelete = {
  ...accepted,
  200: { description: 'The finished operation (?wait=true)', ...json(ref('Operation')) },
};

const resource = {
  type: 'object',
  required: ['name', 'action', 'type', 'kind', 'namespace', 'objectName', 'level', 'outcome'],
  properties: {
    name: str,
    action: { enum: ['apply', 'prune'] },
    type: str,
    apiVersion: str,
    kind: str,
    namespace: str,
    objectName: str,
    level: { type: 'integer' },
    outcome: str,
    message: str,
  },
};

const configuration = {
  type: 'object',
  required: ['content'],
  properties: {
    content: { type: 'string', description: 'the configuration file' },
    imports: {
      type: 'array',
      items: { type: 'object', required: ['name', 'content'], properties: { name: str, content: str } },
    },
  },
};

const dryRunChange = {
  type: 'object',
  required: ['name', 'kind', 'namespace', 'objectName'],
  properties: {
    name: str,
    kind: str,
    namespace: str,
    objectName: str,
    level: { type: 'integer' },
    changes: { type: 'array', items: str },
    message: str,
  },
};
const changes = { type: 'array', items: dryRunChange };

const fieldChange = {
  type: 'object',
  required: ['path'],
  properties: { path: str, from: {}, to: {}, secret: { const: 'changed' } },
};

export const MANAGER_SCHEMAS = {
  Diff: {
    type: 'object',
    required: ['deployment', 'lastManifest', 'mode', 'objects', 'counts', 'changed'],
    properties: {
      deployment: str,
      lastManifest: strOrNull,
      mode: { enum: ['diff', 'drift'] },
      changed: { type: 'boolean' },
      counts: { type: 'object' },
      objects: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'kind', 'namespace', 'objectName', 'action', 'drift', 'changes'],
          properties: {
            name: str,
            kind: str,
            namespace: str,
            objectName: str,
            action: { enum: ['create', 'update', 'unchanged', 'prune', 'failed'] },
            drift: { type: 'array', items: fieldChange },
            deletedOutOfBand: { const: true },
            changes: { type: 'array', items: fieldChange },
            secretData: { type: 'object' },
            message: str,
          },
        },
      },
    },
  },
  DryRun: {
    type: 'object',
    required: ['deployment', 'dryRun', 'server', 'create', 'update', 'unchanged', 'prune', 'failed'],
    additionalProperties: false,
    properties: {
      deployment: str,
      dryRun: { const: true },
      server: { type: 'boolean' },
      offlineReason: str,
      create: changes,
      update: changes,
      unchanged: changes,
      prune: changes,
      failed: changes,
      existing: {
        type: 'integer',
        description: 'objects the deployment has now; prune is counted against it',
      },
      refused: { type: 'string', description: 'why a change with this plan would stop (PRUNE_REFUSED)' },
    },
  },
  DeploymentRequest: {
    type: 'object',
    required: ['name', 'cluster', 'configuration'],
    properties: {
      name: str,
      cluster: { type: 'string', description: 'a cluster configured on the server (--cluster)' },
      namespace: str,
      configuration,
      properties: { type: 'object', description: 'dm: merged into top-level template resources' },
      waitForReady: { type: 'boolean', description: 'dm: wait for workloads (dm deploy --wait)' },
      timeoutSeconds: { type: 'integer' },
      forceConflicts: {
        type: 'boolean',
        description: 'dm: take back fields another field manager changed (dm deploy --force-conflicts)',
      },
      pruneAll: {
        type: 'boolean',
        description:
          'dm: let the change prune every object of the deployment, or more than half (dm deploy --prune-all)',
      },
    },
  },
  Deployment: {
    type: 'object',
    required: ['name', 'state', 'latestManifest', 'cluster', 'namespace', 'updatedAt'],
    properties: {
      name: str,
      state: { enum: ['applying', 'deployed', 'failed', 'deleting'] },
      latestManifest: strOrNull,
      lastGoodManifest: strOrNull,
      cluster: str,
      namespace: str,
      createdAt: str,
      updatedAt: str,
      manifests: { type: 'array', items: str },
      resources: { type: 'array', items: resource },
    },
  },
  ManifestSummary: {
    type: 'object',
    required: ['name', 'deployment', 'action', 'status', 'createdAt'],
    properties: { name: str, deployment: str, action: str, status: str, createdAt: str },
  },
  Manifest: {
    type: 'object',
    required: [
      'name',
      'deployment',
      'action',
      'status',
      'inputConfig',
      'expandedConfig',
      'layout',
      'resources',
    ],
    properties: {
      name: str,
      deployment: str,
      action: { enum: ['create', 'update', 'delete', 'rollback'] },
      status: { enum: ['applying', 'applied', 'failed'] },
      error: str,
      createdAt: str,
      finishedAt: str,
      target: { type: 'object' },
      inputConfig: {
        type: 'object',
        required: ['config', 'imports'],
        properties: { config: str, imports: { type: 'array' } },
      },
      expandedConfig: {
        type: 'object',
        required: ['resources'],
        properties: { resources: { type: 'array' } },
      },
      layout: { type: 'object', required: ['resources'], properties: { resources: { type: 'array' } } },
      references: { type: 'array' },
      resolvedValues: { type: 'array' },
      resources: { type: 'array', items: resource },
    },
  },
  Operation: {
    type: 'object',
    required: [
      'id',
      'deployment',
      'action',
      'status',
      'actor',
      'cluster',
      'namespace',
      'manifest',
      'createdAt',
      'startedAt',
      'finishedAt',
      'progress',
      'errors',
    ],
    properties: {
      id: str,
      deployment: str,
      action: { enum: ['create', 'update', 'delete', 'rollback'] },
      status: { enum: ['pending', 'running', 'done', 'failed', 'interrupted'] },
      actor: str,
      cluster: str,
      namespace: str,
      manifest: strOrNull,
      createdAt: str,
      startedAt: strOrNull,
      finishedAt: strOrNull,
      progress: {
        type: 'array',
        items: {
          type: 'object',
          required: ['action', 'level', 'total', 'done', 'failed', 'pending'],
          properties: {
            action: { enum: ['apply', 'prune'] },
            level: { type: 'integer' },
            total: { type: 'integer' },
            done: { type: 'integer' },
            failed: { type: 'integer' },
            pending: { type: 'integer' },
          },
        },
      },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['resource', 'message'],
          properties: { resource: str, message: str },
        },
      },
      error: str,
    },
  },
  TypeSummary: {
    type: 'object',
    required: ['type', 'instances'],
    properties: { type: str, instances: { type: 'integer' } },
  },
  TypeInstance: {
    type: 'object',
    required: ['name', 'type', 'deployment', 'manifest', 'path'],
    properties: { name: str, type: str, deployment: str, manifest: str, path: str },
  },
  ExpandResult: {
    type: 'object',
    required: ['config', 'layout'],
    properties: { config: { type: 'object' }, layout: { type: 'object' }, references: { type: 'array' } },
  },
} as const;

const list = (name: string) => json({ type: 'array', items: ref(name) });

export const MANAGER_PATHS = {
  '/api/v1/deployments': {
    get: {
      summary: 'Deployments the token may read',
      security: bearer,
      responses: { 200: { description: 'Deployments', ...list('Deployment') }, 401: error, 403: error },
    },
    post: {
      summary: 'Create a deployment (an operation)',
      security: bearer,
      parameters: [wait, dryRun],
      requestBody: { required: true, ...json(ref('DeploymentRequest')) },
      responses: accepted,
    },
  },
  '/api/v1/deployments/{name}': {
    parameters: [nameParam],
    get: {
      summary: 'A deployment: state, latest manifest, resources',
      security: bearer,
      responses: {
        200: { description: 'The deployment', ...json(ref('Deployment')) },
        401: error,
        404: error,
      },
    },
    put: {
      summary: 'Update a deployment (an operation)',
      security: bearer,
      parameters: [wait, dryRun],
      requestBody: { required: true, ...json(ref('DeploymentRequest')) },
      responses: accepted,
    },
    delete: {
      summary: 'Delete a deployment: empty it, then remove it (an operation)',
      security: bearer,
      parameters: [wait],
      responses: acceptedDelete,
    },
  },
  '/api/v1/deployments/{name}/manifests': {
    parameters: [nameParam],
    get: {
      summary: 'The manifests of a deployment, oldest first',
      security: bearer,
      responses: { 200: { description: 'Manifests', ...list('ManifestSummary') }, 401: error, 404: error },
    },
  },
  '/api/v1/deployments/{name}/manifests/{manifest}': {
    parameters: [nameParam, { name: 'manifest', in: 'path', required: true, schema: str }],
    get: {
      summary: 'One manifest in full (by name or sequence number)',
      security: bearer,
      responses: { 200: { description: 'The manifest', ...json(ref('Manifest')) }, 401: error, 404: error },
    },
  },
  '/api/v1/deployments/{name}/diff': {
    parameters: [nameParam],
    post: {
      summary: 'dm diff: the configuration against the last applied manifest and the live objects, per field',
      security: bearer,
      requestBody: { required: true, ...json(ref('DeploymentRequest')) },
      responses: {
        200: { description: 'The diff', ...json(ref('Diff')) },
        400: error,
        401: error,
        404: error,
      },
    },
  },
  '/api/v1/deployments/{name}/drift': {
    parameters: [nameParam],
    get: {
      summary: 'dm drift: the live objects against the last applied manifest, per field',
      security: bearer,
      responses: { 200: { description: 'The drift', ...json(ref('Diff')) }, 401: error, 404: error },
    },
  },
  '/api/v1/deployments/{name}/rollback': {
    parameters: [nameParam],
    post: {
      summary:
        'dm rollback: apply a stored manifest again (default: the applied one before the current) as an operation',
      security: bearer,
      parameters: [
        { name: 'dryRun', in: 'query', schema: { type: 'boolean' } },
        { name: 'wait', in: 'query', schema: { type: 'boolean' } },
      ],
      requestBody: {
        required: false,
        ...json({
          type: 'object',
          properties: { manifest: { type: 'string', description: 'name or sequence number' } },
        }),
      },
      responses: {
        200: { description: 'With dryRun, the plan; with wait, the finished operation', ...json({}) },
        202: { description: 'The operation', ...json(ref('Operation')) },
        401: error,
        404: error,
      },
    },
  },
  '/api/v1/deployments/{name}/history': {
    parameters: [nameParam],
    get: {
      summary:
        'dm history: every manifest with time, actor, status, the manifest a rollback restored, counts',
      security: bearer,
      responses: {
        200: {
          description: 'Manifests, oldest first',
          ...json({
            type: 'array',
            items: {
              type: 'object',
              required: [
                'revision',
                'manifest',
                'time',
                'actor',
                'action',
                'status',
                'applied',
                'pruned',
                'failed',
              ],
              properties: {
                revision: { type: 'integer' },
                manifest: str,
                time: str,
                actor: str,
                action: str,
                status: str,
                restoredFrom: str,
                applied: { type: 'integer' },
                pruned: { type: 'integer' },
                failed: { type: 'integer' },
                error: str,
              },
            },
          }),
        },
        401: error,
        404: error,
      },
    },
  },
  '/api/v1/deployments/{name}/operations': {
    parameters: [nameParam],
    get: {
      summary: 'The operations of a deployment, newest first (its audit trail)',
      security: bearer,
      responses: { 200: { description: 'Operations', ...list('Operation') }, 401: error, 404: error },
    },
  },
  '/api/v1/operations/{id}': {
    parameters: [{ name: 'id', in: 'path', required: true, schema: str }],
    get: {
      summary: 'An operation: status, progress per level, errors per resource',
      security: bearer,
      parameters: [
        {
          name: 'wait',
          in: 'query',
          required: false,
          description: 'answer when the operation has finished or after this many seconds (1-30)',
          schema: { type: 'integer', minimum: 1, maximum: 30 },
        },
      ],
      responses: {
        200: { description: 'The operation', ...json(ref('Operation')) },
        400: error,
        401: error,
        404: error,
      },
    },
  },
  '/api/v1/expand': {
    post: {
      summary: 'Expand a configuration (with its imports) without deploying it',
      security: bearer,
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['configuration'],
          properties: { name: str, configuration, properties: { type: 'object' } },
        }),
      },
      responses: {
        200: { description: 'Primitives and layout', ...json(ref('ExpandResult')) },
        400: error,
        401: error,
      },
    },
  },
  '/api/v1/types': {
    get: {
      summary: 'Types used by deployments the token may read, with instance counts',
      security: bearer,
      responses: { 200: { description: 'Types', ...list('TypeSummary') }, 401: error },
    },
  },
  '/api/v1/types/{type}/instances': {
    parameters: [{ name: 'type', in: 'path', required: true, schema: str, description: "a type, or 'all'" }],
    get: {
      summary: 'Instances of a type with their path into the layout',
      security: bearer,
      responses: { 200: { description: 'Instances', ...list('TypeInstance') }, 401: error },
    },
  },
} as const;
