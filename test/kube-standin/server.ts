/**
 * A STAND-IN Kubernetes API server for tests (docs/deployments.md, "Testing against Kubernetes"): the
 * real `kubectl` talks to it over HTTP(S) on loopback. It is not Kubernetes; it imitates what kubectl
 * 1.32 sees from a 1.32 API server, strictly enough to catch real bugs: discovery (legacy and
 * aggregated), OpenAPI v3 declaring `fieldValidation`, server-side apply with field ownership,
 * conflicts, force and dry-run, GET/LIST/DELETE and watches with replay and 410, name validation,
 * namespace existence and termination, Status objects, resourceVersion/generation, readiness the test
 * switches, TLS with a bearer token, and a request log. Test code only: product code never imports it.
 * What takes time in a cluster (CRD establishment, namespace finalization, rollouts) happens after a
 * short delay or, for tests whose outcome must not depend on kubectl's speed, when the test says so
 * (`crdEstablishDelayMs: null` / `establish`, `namespaceFinalizeMs: null` / `finalizeNamespace`,
 * `setReady`), typically once `nextRequest` shows kubectl watching for it.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { formatYaml, parseYaml } from '../../client/src/document/yaml.js';
import {
  builtinTypes,
  type FieldCause,
  METADATA_FIELDS,
  nameProblem,
  type ResourceType,
  typesFromCrd,
  validateObject,
} from './kinds.js';
import {
  applyFields,
  deepEqual,
  findConflicts,
  formatField,
  isObject,
  type Json,
  type ManagerEntry,
  managedFieldsJson,
  recordUpdate,
} from './ssa.js';
import { loopbackCertificate } from './tls.js';

export interface StandinOptions {
  /** Serve HTTPS with bearer-token auth (default true); false serves plain HTTP without auth. */
  tls?: boolean;
  /** Serve aggregated discovery when asked for it (default true). */
  aggregatedDiscovery?: boolean;
  /** Serve /openapi/v3 (default true); without it kubectl's default validation fails. */
  openapi?: boolean;
  /** Minor version reported by /version (default '32'). */
  minor?: string;
  /** Delay before a new CRD is Established and served (default 150 ms); `null` waits for `establish`. */
  crdEstablishDelayMs?: number | null;
  /**
   * Delay before a deleted namespace's contents and itself are gone (default 50 ms); `null` keeps it
   * Terminating until `finalizeNamespace`.
   */
  namespaceFinalizeMs?: number | null;
  /** Delay of the stand-in "controllers" that write workload status (default 30 ms). */
  controllerDelayMs?: number;
  /** Whether workloads become ready unless the test says otherwise (default true). */
  readyByDefault?: boolean;
}

export interface RequestRecord {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  accept: string | undefined;
  authorized: boolean;
  userAgent: string | undefined;
  body: unknown;
  status: number;
}

export interface KubeconfigOptions {
  namespace?: string;
  /** Write a wrong token (for 401 tests). */
  wrongToken?: boolean;
  /** Extra contexts on the same cluster: name → default namespace. */
  contexts?: Record<string, string>;
}

export interface KubeStandin {
  url: string;
  token: string;
  /** PEM of the self-signed certificate (also the CA), when TLS. */
  caCert: string | undefined;
  log: RequestRecord[];
  clearLog(): void;
  /** Writes a kubeconfig pointing at this stand-in into `dir`; returns its path. */
  writeKubeconfig(dir: string, options?: KubeconfigOptions): string;
  /** The stored object, or undefined. `apiVersion` like `apps/v1` or `v1`. */
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): Json | undefined;
  /** Every stored object (namespaces included). */
  objects(): Json[];
  /** Switches readiness of one workload (its status is rewritten, watchers see MODIFIED). */
  setReady(kind: string, namespace: string, name: string, ready: boolean): void;
  setReadyByDefault(ready: boolean): void;
  /** Forgets watch history up to now: watches from older resource versions get 410 Expired. */
  compact(): void;
  /** Establishes a CRD now (its kinds are served from now on), as `crdEstablishDelayMs` would later. */
  establish(crdName: string): void;
  /** Removes a Terminating namespace and its contents now, as `namespaceFinalizeMs` would later. */
  finalizeNamespace(name: string): void;
  /**
   * Resolves with the first request `match` accepts that arrives from this call on, once the stand-in
   * has handled it (answered it, or for a watch, registered the watcher and sent the replay). Tests
   * act on what kubectl did, not on how long it took: e.g. make a workload ready once kubectl watches.
   */
  nextRequest(match: (request: RequestRecord) => boolean): Promise<RequestRecord>;
  close(): Promise<void>;
}

interface StoredObject {
  type: ResourceType;
  object: Json;
  entries: ManagerEntry[];
}

interface WatchEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  group: string;
  plural: string;
  namespace: string;
  object: Json;
}

interface Watcher {
  group: string;
  plural: string;
  namespace: string | undefined;
  matches: (o: Json) => boolean;
  send: (e: WatchEvent) => void;
}

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Json,
  ) {
    super(message);
  }
}

function statusBody(code: number, reason: string, message: string, details?: Json): Json {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const BODY_TYPES = [
  'application/json',
  'application/yaml',
  'application/apply-patch+yaml',
  'application/merge-patch+json',
  'application/json-patch+json',
];
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

function gvString(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function meta(o: Json): Json {
  if (!isObject(o.metadata)) o.metadata = {};
  return o.metadata as Json;
}

export async function startKubeStandin(options: StandinOptions = {}): Promise<KubeStandin> {
  const tls = options.tls ?? true;
  const token = randomBytes(16).toString('hex');
  const cert = tls ? loopbackCertificate() : undefined;
  const aggregated = options.aggregatedDiscovery ?? true;
  const openapi = options.openapi ?? true;
  const minor = options.minor ?? '32';
  const crdDelay = options.crdEstablishDelayMs === undefined ? 150 : options.crdEstablishDelayMs;
  const nsFinalize = options.namespaceFinalizeMs === undefined ? 50 : options.namespaceFinalizeMs;
  const controllerDelay = options.controllerDelayMs ?? 30;
  let readyByDefault = options.readyByDefault ?? true;
  const readiness = new Map<string, boolean>();

  const types: ResourceType[] = builtinTypes();
  const objects = new Map<string, StoredObject>();
  const events: WatchEvent[] = [];
  const watchers = new Set<Watcher>();
  const timers = new Set<NodeJS.Timeout>();
  const log: RequestRecord[] = [];
  const requestWaiters = new Set<{
    match: (r: RequestRecord) => boolean;
    resolve: (r: RequestRecord) => void;
  }>();
  let rv = 1000;
  let compactedRv = 0;
  let seq = 0;

  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const storeKey = (group: string, plural: string, ns: string, name: string) =>
    `${group}/${plural}/${ns}/${name}`;

  function findType(group: string, version: string, plural: string): ResourceType | undefined {
    return types.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  function external(stored: StoredObject, type: ResourceType = stored.type): Json {
    const o = structuredClone(stored.object);
    o.apiVersion = gvString(type.group, type.version);
    o.kind = type.kind;
    const m = meta(o);
    if (stored.entries.length > 0) m.managedFields = managedFieldsJson(stored.entries);
    return o;
  }

  function emit(type: WatchEvent['type'], stored: StoredObject): void {
    const m = meta(stored.object);
    const event: WatchEvent = {
      rv,
      type,
      group: stored.type.group,
      plural: stored.type.plural,
      namespace: String(m.namespace ?? ''),
      object: external(stored),
    };
    events.push(event);
    for (const w of watchers) {
      if (w.group !== event.group || w.plural !== event.plural) continue;
      if (w.namespace !== undefined && w.namespace !== event.namespace) continue;
      if (w.matches(event.object)) w.send(event);
    }
  }

  function namespaceExists(ns: string): StoredObject | undefined {
    return objects.get(storeKey('', 'namespaces', '', ns));
  }

  function seedNamespace(name: string): void {
    rv++;
    const stored: StoredObject = {
      type: types.find((t) => t.kind === 'Namespace')!,
      object: {
        metadata: {
          name,
          uid: randomUUID(),
          resourceVersion: String(rv),
          creationTimestamp: now(),
          labels: { 'kubernetes.io/metadata.name': name },
        },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      },
      entries: [],
    };
    objects.set(storeKey('', 'namespaces', '', name), stored);
    emit('ADDED', stored);
  }
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) seedNamespace(ns);

  // ---- "controllers": workload status, CRD establishment, namespace finalization ----

  function writeStatus(stored: StoredObject): void {
    const type = stored.type;
    if (!type.readiness) return;
    const key = `${type.kind}/${meta(stored.object).namespace}/${meta(stored.object).name}`;
    const ready = readiness.get(key) ?? readyByDefault;
    const spec = isObject(stored.object.spec) ? stored.object.spec : {};
    const generation = meta(stored.object).generation;
    let status: Json;
    if (type.readiness === 'job') {
      status = ready
        ? {
            succeeded: 1,
            conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: now() }],
          }
        : { active: 1 };
    } else {
      const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
      if (type.readiness === 'deployment') {
        status = {
          observedGeneration: generation,
          replicas,
          updatedReplicas: replicas,
          ...(ready
            ? { readyReplicas: replicas, availableReplicas: replicas }
            : { unavailableReplicas: replicas }),
          conditions: [
            {
              type: 'Available',
              status: ready ? 'True' : 'False',
              reason: ready ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
              lastTransitionTime: now(),
            },
            {
              type: 'Progressing',
              status: 'True',
              reason: ready ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated',
              lastTransitionTime: now(),
            },
          ],
        };
      } else if (type.readiness === 'statefulset') {
        status = {
          observedGeneration: generation,
          replicas,
          currentReplicas: replicas,
          updatedReplicas: replicas,
          readyReplicas: ready ? replicas : 0,
          availableReplicas: ready ? replicas : 0,
          currentRevision: `${meta(stored.object).name}-1`,
          updateRevision: `${meta(stored.object).name}-1`,
        };
      } else {
        status = {
          observedGeneration: generation,
          desiredNumberScheduled: 1,
          currentNumberScheduled: 1,
          updatedNumberScheduled: 1,
          numberReady: ready ? 1 : 0,
          numberAvailable: ready ? 1 : 0,
          numberMisscheduled: 0,
        };
      }
    }
    if (deepEqual(stripTimes(stored.object.status), stripTimes(status))) return;
    rv++;
    stored.object.status = status;
    meta(stored.object).resourceVersion = String(rv);
    emit('MODIFIED', stored);
  }

  function stripTimes(value: unknown): unknown {
    return JSON.parse(JSON.stringify(value ?? null, (k, v) => (k === 'lastTransitionTime' ? undefined : v)));
  }

  function establish(crdName: string): void {
    const stored = objects.get(storeKey('apiextensions.k8s.io', 'customresourcedefinitions', '', crdName));
    if (!stored || meta(stored.object).deletionTimestamp) return;
    const newTypes = typesFromCrd(stored.object);
    for (const t of newTypes) {
      const i = types.findIndex(
        (x) => x.group === t.group && x.version === t.version && x.plural === t.plural,
      );
      if (i >= 0) types[i] = t;
      else types.push(t);
    }
    const spec = stored.object.spec as Json;
    rv++;
    stored.object.status = {
      acceptedNames: spec.names,
      storedVersions: newTypes.map((t) => t.version).slice(0, 1),
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', lastTransitionTime: now() },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', lastTransitionTime: now() },
      ],
    };
    meta(stored.object).resourceVersion = String(rv);
    emit('MODIFIED', stored);
  }

  function removeObject(key: string, stored: StoredObject): void {
    objects.delete(key);
    rv++;
    meta(stored.object).resourceVersion = String(rv);
    emit('DELETED', stored);
  }

  function finalizeNamespace(name: string): void {
    for (const [key, stored] of [...objects]) {
      if (stored.type.namespaced && meta(stored.object).namespace === name) removeObject(key, stored);
    }
    const ns = objects.get(storeKey('', 'namespaces', '', name));
    if (ns) removeObject(storeKey('', 'namespaces', '', name), ns);
  }

  // ---- discovery and OpenAPI ----

  function groupsInOrder(): string[] {
    const groups: string[] = [];
    for (const t of types) if (t.group !== '' && !groups.includes(t.group)) groups.push(t.group);
    return groups;
  }

  function versionsOf(group: string): string[] {
    const versions: string[] = [];
    for (const t of types) if (t.group === group && !versions.includes(t.version)) versions.push(t.version);
    return versions;
  }

  function resourceList(group: string, version: string): Json {
    const resources: Json[] = [];
    for (const t of types.filter((x) => x.group === group && x.version === version)) {
      resources.push({
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: VERBS,
        ...(t.shortNames ? { shortNames: t.shortNames } : {}),
      });
      if (t.statusSubresource) {
        resources.push({
          name: `${t.plural}/status`,
          singularName: '',
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ['get', 'patch', 'update'],
        });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gvString(group, version), resources };
  }

  function aggregatedGroup(group: string): Json {
    return {
      metadata: { name: group, creationTimestamp: null },
      versions: versionsOf(group).map((version) => ({
        version,
        resources: types
          .filter((t) => t.group === group && t.version === version)
          .map((t) => ({
            resource: t.plural,
            responseKind: { group, version, kind: t.kind },
            scope: t.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: t.singular,
            verbs: VERBS,
            ...(t.shortNames ? { shortNames: t.shortNames } : {}),
            ...(t.statusSubresource
              ? {
                  subresources: [
                    {
                      subresource: 'status',
                      responseKind: { group, version, kind: t.kind },
                      verbs: ['get', 'patch', 'update'],
                    },
                  ],
                }
              : {}),
          })),
        freshness: 'Current',
      })),
    };
  }

  function openapiDocument(group: string, version: string): Json {
    const paths: Json = {};
    const prefix = group === '' ? '/api/v1' : `/apis/${group}/${version}`;
    for (const t of types.filter((x) => x.group === group && x.version === version)) {
      const path = t.namespaced
        ? `${prefix}/namespaces/{namespace}/${t.plural}/{name}`
        : `${prefix}/${t.plural}/{name}`;
      const gvk = { group, version, kind: t.kind };
      const queryParam = (name: string) => ({
        name,
        in: 'query',
        schema: { type: 'string', uniqueItems: true },
      });
      paths[path] = {
        get: {
          operationId: `read${t.kind}`,
          'x-kubernetes-action': 'get',
          'x-kubernetes-group-version-kind': gvk,
        },
        patch: {
          operationId: `patch${t.kind}`,
          'x-kubernetes-action': 'patch',
          'x-kubernetes-group-version-kind': gvk,
          parameters: [
            queryParam('dryRun'),
            queryParam('fieldManager'),
            queryParam('fieldValidation'),
            { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } },
          ],
        },
        delete: {
          operationId: `delete${t.kind}`,
          'x-kubernetes-action': 'delete',
          'x-kubernetes-group-version-kind': gvk,
        },
      };
    }
    return { openapi: '3.0.0', info: { title: 'Kubernetes (stand-in)', version: `v1.${minor}.0` }, paths };
  }

  function openapiRoot(): Json {
    const gvs: [string, string][] = [['', 'v1']];
    for (const g of groupsInOrder()) for (const v of versionsOf(g)) gvs.push([g, v]);
    const paths: Json = {};
    for (const [g, v] of gvs) {
      const rel = g === '' ? 'api/v1' : `apis/${g}/${v}`;
      const hash = createHash('sha256')
        .update(JSON.stringify(openapiDocument(g, v)))
        .digest('hex')
        .slice(0, 32);
      paths[rel] = { serverRelativeURL: `/openapi/v3/${rel}?hash=${hash}` };
    }
    return { paths };
  }

  // ---- resource handlers ----

  interface Target {
    type: ResourceType;
    namespace: string | undefined;
    name: string | undefined;
    subresource: string | undefined;
    watch: boolean;
  }

  function parseResourcePath(segments: string[], watchPrefix: boolean): Target | 'notfound' {
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === 'api') {
      group = '';
      version = segments[1] ?? '';
      rest = segments.slice(2);
    } else {
      group = segments[1] ?? '';
      version = segments[2] ?? '';
      rest = segments.slice(3);
    }
    let watch = watchPrefix;
    if (rest[0] === 'watch') {
      watch = true;
      rest = rest.slice(1);
    }
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && !['status', 'finalize'].includes(rest[2]!)) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const type = findType(group, version, rest[0] ?? '');
    if (!type || (namespace !== undefined && !type.namespaced) || rest.length > 3) return 'notfound';
    return { type, namespace, name: rest[1], subresource: rest[2], watch };
  }

  function parseSelector(
    fieldSelector: string | undefined,
    labelSelector: string | undefined,
  ): (o: Json) => boolean {
    const tests: ((o: Json) => boolean)[] = [];
    for (const term of (fieldSelector ?? '').split(',').filter(Boolean)) {
      const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(term);
      if (!m) throw new ApiError(400, 'BadRequest', `invalid field selector: ${term}`);
      const [, field, op, value] = m;
      if (field !== 'metadata.name' && field !== 'metadata.namespace') {
        throw new ApiError(400, 'BadRequest', `field label not supported: ${field}`);
      }
      const key = field.slice('metadata.'.length);
      tests.push((o) => (String(meta(o)[key] ?? '') === value) === (op !== '!='));
    }
    for (const term of splitLabelSelector(labelSelector ?? '')) {
      const eq = /^\s*([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)\s*$/.exec(term);
      const set = /^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$/.exec(term);
      const exists = /^\s*(!?)([\w./-]+)\s*$/.exec(term);
      const labels = (o: Json) => (meta(o).labels ?? {}) as Json;
      if (eq) {
        const [, k, op, v] = eq;
        tests.push((o) => (op === '!=' ? labels(o)[k!] !== v : labels(o)[k!] === v));
      } else if (set) {
        const [, k, op, list] = set;
        const values = list!.split(',').map((s) => s.trim());
        tests.push((o) => {
          const v = labels(o)[k!];
          return op === 'in' ? values.includes(String(v)) : v === undefined || !values.includes(String(v));
        });
      } else if (exists) {
        const [, not, k] = exists;
        tests.push((o) => k! in labels(o) === (not !== '!'));
      } else {
        throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${term}`);
      }
    }
    return (o) => tests.every((t) => t(o));
  }

  function splitLabelSelector(s: string): string[] {
    const out: string[] = [];
    let depth = 0;
    let cur = '';
    for (const ch of s) {
      if (ch === '(') depth++;
      if (ch === ')') depth--;
      if (ch === ',' && depth === 0) {
        out.push(cur);
        cur = '';
      } else cur += ch;
    }
    if (cur.trim()) out.push(cur);
    return out;
  }

  function notFound(type: ResourceType, name: string): ApiError {
    return new ApiError(
      404,
      'NotFound',
      `${type.plural}${type.group ? `.${type.group}` : ''} "${name}" not found`,
      {
        name,
        group: type.group,
        kind: type.plural,
      },
    );
  }

  function requireNamespace(type: ResourceType, ns: string, name: string): void {
    const nsObj = namespaceExists(ns);
    if (!nsObj) {
      throw new ApiError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    }
    if (meta(nsObj.object).deletionTimestamp) {
      throw new ApiError(
        403,
        'Forbidden',
        `${type.plural} "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
        {
          name,
          kind: type.plural,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${ns} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      );
    }
  }

  function invalid(type: ResourceType, name: string, causes: FieldCause[]): ApiError {
    const kindName = type.group ? `${type.kind}.${type.group}` : type.kind;
    return new ApiError(
      422,
      'Invalid',
      `${kindName} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
      { name, group: type.group, kind: type.kind, causes },
    );
  }

  /** Checks kind/version/name/namespace agreement and strict fields; returns warnings. */
  function checkBody(
    target: Target,
    body: unknown,
    fieldValidation: string,
  ): { body: Json; warnings: string[] } {
    const type = target.type;
    if (!isObject(body))
      throw new ApiError(400, 'BadRequest', 'the body of the request was not a JSON object');
    const expected = gvString(type.group, type.version);
    if (typeof body.apiVersion !== 'string' || body.apiVersion === '') {
      throw new ApiError(400, 'BadRequest', "Object 'apiVersion' is missing in the request body");
    }
    if (typeof body.kind !== 'string' || body.kind === '') {
      throw new ApiError(400, 'BadRequest', "Object 'Kind' is missing in the request body");
    }
    if (body.apiVersion !== expected) {
      throw new ApiError(
        400,
        'BadRequest',
        `the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`,
      );
    }
    if (body.kind !== type.kind) {
      throw new ApiError(
        400,
        'BadRequest',
        `the kind in the data (${body.kind}) does not match the expected kind (${type.kind})`,
      );
    }
    const m = isObject(body.metadata) ? body.metadata : {};
    if (target.name !== undefined && m.name !== undefined && m.name !== target.name) {
      throw new ApiError(
        400,
        'BadRequest',
        `the name of the object (${String(m.name)}) does not match the name on the URL (${target.name})`,
      );
    }
    if (type.namespaced && m.namespace !== undefined && m.namespace !== target.namespace) {
      throw new ApiError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const unknown: string[] = [];
    const cleaned = structuredClone(body);
    for (const k of Object.keys(body)) {
      if (['apiVersion', 'kind', 'metadata'].includes(k)) continue;
      if (type.fields && !type.fields.includes(k)) {
        unknown.push(k);
        delete cleaned[k];
      }
    }
    for (const k of Object.keys(m)) {
      if (!METADATA_FIELDS.has(k)) {
        unknown.push(`metadata.${k}`);
        delete (cleaned.metadata as Json)[k];
      }
    }
    if (unknown.length > 0 && fieldValidation === 'Strict') {
      throw new ApiError(
        400,
        'BadRequest',
        `strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`,
      );
    }
    const warnings = fieldValidation === 'Ignore' ? [] : unknown.map((u) => `unknown field "${u}"`);
    return { body: cleaned, warnings };
  }

  function validateName(type: ResourceType, name: string): void {
    const problem = nameProblem(name, type.nameRule);
    if (problem) {
      throw invalid(type, name, [
        {
          field: 'metadata.name',
          message: `Invalid value: "${name}": ${problem}`,
          reason: 'FieldValueInvalid',
        },
      ]);
    }
  }

  function queryFlags(q: URLSearchParams): { dryRun: boolean; fieldValidation: string } {
    const dryRun = q.getAll('dryRun');
    if (dryRun.some((d) => d !== 'All')) {
      throw new ApiError(
        400,
        'BadRequest',
        `Invalid value: ${JSON.stringify(dryRun)}: supported values: "All"`,
      );
    }
    const fieldValidation = q.get('fieldValidation') ?? 'Warn';
    if (!['Strict', 'Warn', 'Ignore'].includes(fieldValidation)) {
      throw new ApiError(
        400,
        'BadRequest',
        `fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`,
      );
    }
    return { dryRun: dryRun.length > 0, fieldValidation };
  }

  function specPart(o: Json): Json {
    const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
    return rest;
  }

  /** Stores a new or changed object; returns what to send back. */
  function commit(
    target: Target,
    name: string,
    live: StoredObject | undefined,
    object: Json,
    entries: ManagerEntry[],
    dryRun: boolean,
  ): { status: number; body: Json } {
    const type = target.type;
    const ns = target.namespace ?? '';
    const m = meta(object);
    m.name = name;
    if (type.namespaced) m.namespace = ns;
    else delete m.namespace;
    if (!live) {
      m.uid = randomUUID();
      m.creationTimestamp = now();
      if (type.generation) m.generation = 1;
      if (type.kind === 'Service') {
        const spec = (isObject(object.spec) ? object.spec : {}) as Json;
        object.spec = spec;
        if (spec.type !== 'ExternalName' && spec.clusterIP === undefined) {
          const n = objects.size + 10;
          spec.clusterIP = `10.96.${(n >> 8) & 255}.${n & 255}`;
          spec.clusterIPs = [spec.clusterIP];
        }
        object.status = { loadBalancer: {} };
      }
      if (type.kind === 'Namespace') {
        object.spec = { finalizers: ['kubernetes'] };
        object.status = { phase: 'Active' };
        m.labels = { ...((m.labels as Json) ?? {}), 'kubernetes.io/metadata.name': name };
      }
    }
    if (type.kind === 'Service' && isObject(object.spec)) {
      // Defaults, as the real API server sets them on every write.
      const spec = object.spec;
      if (spec.type === undefined) spec.type = 'ClusterIP';
      if (spec.clusterIP === undefined && live)
        spec.clusterIP = (live.object.spec as Json | undefined)?.clusterIP;
      for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
        if (isObject(p) && p.protocol === undefined) p.protocol = 'TCP';
        if (isObject(p) && p.targetPort === undefined) p.targetPort = p.port;
      }
    }
    if (live) {
      const before = live.object;
      if (type.generation) {
        const prev = Number(meta(before).generation ?? 1);
        m.generation = deepEqual(specPart(before), specPart(object)) ? prev : prev + 1;
      }
      const unchanged =
        deepEqual(
          { ...object, metadata: { ...m, resourceVersion: undefined } },
          {
            ...before,
            metadata: { ...meta(before), resourceVersion: undefined },
          },
        ) && sameOwnership(live.entries, entries);
      if (unchanged) return { status: 200, body: external(live) };
    }
    const stored: StoredObject = { type, object, entries };
    if (dryRun) {
      m.resourceVersion = live ? meta(live.object).resourceVersion : undefined;
      return { status: live ? 200 : 201, body: external(stored) };
    }
    rv++;
    m.resourceVersion = String(rv);
    objects.set(storeKey(type.group, type.plural, ns, name), stored);
    emit(live ? 'MODIFIED' : 'ADDED', stored);
    if (type.readiness) later(controllerDelay, () => writeStatus(stored));
    if (type.kind === 'CustomResourceDefinition' && !live && crdDelay !== null)
      later(crdDelay, () => establish(name));
    return { status: live ? 200 : 201, body: external(stored) };
  }

  function sameOwnership(a: ManagerEntry[], b: ManagerEntry[]): boolean {
    const norm = (es: ManagerEntry[]) =>
      es.map((e) => `${e.manager}|${e.operation}|${[...e.fields].sort().join(',')}`).sort();
    return deepEqual(norm(a), norm(b));
  }

  function handleApply(
    target: Target,
    q: URLSearchParams,
    raw: unknown,
  ): { status: number; body: Json; warnings: string[] } {
    const type = target.type;
    const name = target.name!;
    const manager = q.get('fieldManager');
    if (!manager) {
      throw new ApiError(
        422,
        'Invalid',
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    }
    const force = q.get('force');
    if (force !== null && force !== 'true' && force !== 'false') {
      throw new ApiError(400, 'BadRequest', `invalid force value: ${force}`);
    }
    const { dryRun, fieldValidation } = queryFlags(q);
    const { body, warnings } = checkBody(target, raw, fieldValidation);
    validateName(type, name);
    const key = storeKey(type.group, type.plural, target.namespace ?? '', name);
    const live = objects.get(key);
    if (type.namespaced && !live) requireNamespace(type, target.namespace!, name);
    if (live && meta(live.object).deletionTimestamp && type.kind !== 'Namespace') {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${type.plural} "${name}": object is being deleted`,
      );
    }
    if (type.statusSubresource) delete body.status;
    const apiVersion = gvString(type.group, type.version);
    const liveObject = live ? external(live) : undefined;
    const conflicts = findConflicts(liveObject, body, manager, live?.entries ?? []);
    if (conflicts.length > 0 && force !== 'true') {
      const causes = conflicts.map((c) => ({
        type: 'FieldManagerConflict',
        message: `conflict with "${c.manager}" using ${c.apiVersion}`,
        field: formatField(c.field),
      }));
      const lines = causes.map((c) => `- ${c.message}: ${c.field}`).join('\n');
      throw new ApiError(
        409,
        'Conflict',
        `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: ${causes.length === 1 ? `${causes[0]!.message}: ${causes[0]!.field}` : `\n${lines}`}`,
        { name, group: type.group, kind: type.plural, causes },
      );
    }
    const base = live ? structuredClone(live.object) : undefined;
    const result = applyFields(base, body, manager, apiVersion, live?.entries ?? [], now());
    const causes = validateObject(type, { ...result.object, apiVersion, kind: type.kind });
    if (causes.length > 0) throw invalid(type, name, causes);
    return { ...commit(target, name, live, result.object, result.entries, dryRun), warnings };
  }

  function handleMergePatch(
    target: Target,
    q: URLSearchParams,
    raw: unknown,
    contentType: string,
  ): { status: number; body: Json } {
    const type = target.type;
    const name = target.name!;
    const { dryRun } = queryFlags(q);
    const key = storeKey(type.group, type.plural, target.namespace ?? '', name);
    const live = objects.get(key);
    if (!live) throw notFound(type, name);
    let patched: Json = external(live);
    if (contentType === 'application/merge-patch+json') {
      if (!isObject(raw)) throw new ApiError(400, 'BadRequest', 'merge patch body must be a JSON object');
      patched = mergePatch(patched, raw) as Json;
    } else {
      if (!Array.isArray(raw)) throw new ApiError(400, 'BadRequest', 'json patch body must be a JSON array');
      patched = jsonPatch(patched, raw);
    }
    const m = meta(patched);
    if (m.name !== name) throw new ApiError(400, 'BadRequest', 'metadata.name cannot be changed by a patch');
    const manager = q.get('fieldManager') ?? 'unknown';
    const entries =
      Array.isArray(m.managedFields) && contentType === 'application/json-patch+json'
        ? live.entries
        : recordUpdate(
            live.entries,
            isObject(raw) ? raw : {},
            manager,
            gvString(type.group, type.version),
            now(),
          );
    delete m.managedFields;
    const causes = validateObject(type, patched);
    if (causes.length > 0) throw invalid(type, name, causes);
    return commit(target, name, live, patched, entries, dryRun);
  }

  function handleCreate(
    target: Target,
    q: URLSearchParams,
    raw: unknown,
  ): { status: number; body: Json; warnings: string[] } {
    const type = target.type;
    const { dryRun, fieldValidation } = queryFlags(q);
    const { body, warnings } = checkBody(target, raw, fieldValidation);
    const name = String(meta(body).name ?? '');
    if (name === '') {
      throw invalid(type, '', [
        {
          field: 'metadata.name',
          message: 'Required value: name or generateName is required',
          reason: 'FieldValueRequired',
        },
      ]);
    }
    validateName(type, name);
    if (type.namespaced) requireNamespace(type, target.namespace!, name);
    if (objects.has(storeKey(type.group, type.plural, target.namespace ?? '', name))) {
      throw new ApiError(409, 'AlreadyExists', `${type.plural} "${name}" already exists`, {
        name,
        group: type.group,
        kind: type.plural,
      });
    }
    if (type.statusSubresource) delete body.status;
    const causes = validateObject(type, body);
    if (causes.length > 0) throw invalid(type, name, causes);
    const manager = q.get('fieldManager') ?? 'unknown';
    const entries = recordUpdate([], body, manager, gvString(type.group, type.version), now());
    const { apiVersion: _a, kind: _k, ...object } = body;
    return { ...commit({ ...target, name }, name, undefined, object, entries, dryRun), warnings };
  }

  function handleDelete(target: Target, q: URLSearchParams): { status: number; body: Json } {
    const type = target.type;
    const name = target.name!;
    const { dryRun } = queryFlags(q);
    const key = storeKey(type.group, type.plural, target.namespace ?? '', name);
    const live = objects.get(key);
    if (!live) throw notFound(type, name);
    if (dryRun) return { status: 200, body: external(live) };
    if (type.kind === 'Namespace') {
      if (!meta(live.object).deletionTimestamp) {
        rv++;
        meta(live.object).deletionTimestamp = now();
        meta(live.object).resourceVersion = String(rv);
        live.object.status = { phase: 'Terminating' };
        emit('MODIFIED', live);
        if (nsFinalize !== null) later(nsFinalize, () => finalizeNamespace(name));
      }
      return { status: 200, body: external(live) };
    }
    if (type.kind === 'CustomResourceDefinition') {
      const crdTypes = types.filter((t) => t.crd === name);
      for (const [k, stored] of [...objects]) if (crdTypes.includes(stored.type)) removeObject(k, stored);
      for (const t of crdTypes) types.splice(types.indexOf(t), 1);
    }
    removeObject(key, live);
    return { status: 200, body: external(live) };
  }

  function handleList(target: Target, q: URLSearchParams): Json {
    const type = target.type;
    const matches = parseSelector(q.get('fieldSelector') ?? undefined, q.get('labelSelector') ?? undefined);
    const items: Json[] = [];
    for (const stored of objects.values()) {
      if (stored.type.group !== type.group || stored.type.plural !== type.plural) continue;
      if (target.namespace !== undefined && meta(stored.object).namespace !== target.namespace) continue;
      const o = external(stored, type);
      if (!matches(o)) continue;
      delete o.apiVersion;
      delete o.kind;
      items.push(o);
    }
    items.sort((a, b) =>
      `${meta(a).namespace ?? ''}/${meta(a).name}`.localeCompare(
        `${meta(b).namespace ?? ''}/${meta(b).name}`,
      ),
    );
    return {
      kind: `${type.kind}List`,
      apiVersion: gvString(type.group, type.version),
      metadata: { resourceVersion: String(rv) },
      items,
    };
  }

  function handleWatch(target: Target, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
    const type = target.type;
    const base = parseSelector(q.get('fieldSelector') ?? undefined, q.get('labelSelector') ?? undefined);
    const matches = target.name === undefined ? base : (o: Json) => meta(o).name === target.name && base(o);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const write = (type: string, object: Json) => res.write(`${JSON.stringify({ type, object })}\n`);
    const send = (e: WatchEvent) => {
      const o = structuredClone(e.object);
      o.apiVersion = gvString(type.group, type.version);
      write(e.type, o);
    };
    const requested = q.get('resourceVersion');
    if (requested === null || requested === '' || requested === '0') {
      for (const stored of objects.values()) {
        if (stored.type.group !== type.group || stored.type.plural !== type.plural) continue;
        if (target.namespace !== undefined && meta(stored.object).namespace !== target.namespace) continue;
        const o = external(stored, type);
        if (matches(o)) write('ADDED', o);
      }
    } else {
      const from = Number(requested);
      if (!Number.isInteger(from) || from < compactedRv) {
        write('ERROR', statusBody(410, 'Expired', `too old resource version: ${requested} (${compactedRv})`));
        res.end();
        return;
      }
      for (const e of events) {
        if (e.rv <= from || e.group !== type.group || e.plural !== type.plural) continue;
        if (target.namespace !== undefined && e.namespace !== target.namespace) continue;
        if (matches(e.object)) send(e);
      }
    }
    const watcher: Watcher = {
      group: type.group,
      plural: type.plural,
      namespace: target.namespace,
      matches,
      send,
    };
    watchers.add(watcher);
    const timeout = Number(q.get('timeoutSeconds') ?? '1800');
    const timer = setTimeout(() => res.end(), timeout * 1000);
    const stop = () => {
      clearTimeout(timer);
      watchers.delete(watcher);
    };
    req.on('close', stop);
    res.on('close', stop);
  }

  // ---- HTTP plumbing ----

  function send(
    res: ServerResponse,
    status: number,
    body: unknown,
    contentType = 'application/json',
    warnings: string[] = [],
  ): void {
    const headers: Record<string, string | string[]> = { 'Content-Type': contentType };
    if (warnings.length > 0) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
    res.writeHead(status, headers);
    res.end(JSON.stringify(body));
  }

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  function parseBody(text: string, contentType: string): unknown {
    if (text.trim() === '') return undefined;
    if (!BODY_TYPES.includes(contentType)) {
      throw new ApiError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: ${BODY_TYPES.join(', ')} (the stand-in speaks no protobuf)`,
      );
    }
    try {
      return JSON.parse(text);
    } catch {
      if (contentType !== 'application/apply-patch+yaml') {
        throw new ApiError(400, 'BadRequest', 'the request body is not valid JSON');
      }
      try {
        return parseYaml(text);
      } catch (error) {
        throw new ApiError(400, 'BadRequest', `error decoding YAML: ${(error as Error).message}`);
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin');
    const q = url.searchParams;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim() || undefined;
    const record: RequestRecord = {
      seq: ++seq,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(q),
      contentType,
      accept: req.headers.accept,
      authorized: !tls || req.headers.authorization === `Bearer ${token}`,
      userAgent: req.headers['user-agent'],
      body: undefined,
      status: 0,
    };
    log.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });
    record.status = 200;
    try {
      const text = await readBody(req);
      const body = parseBody(text, contentType ?? '');
      record.body = body;
      if (!record.authorized) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
      route(req, res, url, q, body, contentType);
    } catch (error) {
      if (error instanceof ApiError) {
        send(res, error.code, statusBody(error.code, error.reason, error.message, error.details));
      } else {
        send(
          res,
          500,
          statusBody(500, 'InternalError', `Internal error occurred: ${(error as Error).message}`),
        );
      }
    }
    for (const waiter of [...requestWaiters]) {
      if (!waiter.match(record)) continue;
      requestWaiters.delete(waiter);
      waiter.resolve(record);
    }
  }

  function route(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    q: URLSearchParams,
    body: unknown,
    contentType: string | undefined,
  ): void {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const accept = req.headers.accept ?? '';
    if (path === '/version') {
      send(res, 200, {
        major: '1',
        minor,
        gitVersion: `v1.${minor}.0-standin`,
        gitCommit: 'standin',
        gitTreeState: 'clean',
        buildDate: '2025-01-01T00:00:00Z',
        goVersion: 'go1.23',
        compiler: 'gc',
        platform: 'linux/amd64',
      });
      return;
    }
    if (['/healthz', '/readyz', '/livez'].includes(path)) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    const wantsAggregated =
      aggregated && accept.includes('as=APIGroupDiscoveryList') && accept.includes('v=v2;');
    if (path === '/api' && method === 'GET') {
      if (wantsAggregated) {
        send(
          res,
          200,
          {
            kind: 'APIGroupDiscoveryList',
            apiVersion: 'apidiscovery.k8s.io/v2',
            metadata: {},
            items: [aggregatedGroup('')],
          },
          AGGREGATED,
        );
      } else {
        send(res, 200, {
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: url.host }],
        });
      }
      return;
    }
    if (path === '/apis' && method === 'GET') {
      if (wantsAggregated) {
        send(
          res,
          200,
          {
            kind: 'APIGroupDiscoveryList',
            apiVersion: 'apidiscovery.k8s.io/v2',
            metadata: {},
            items: groupsInOrder().map(aggregatedGroup),
          },
          AGGREGATED,
        );
      } else {
        send(res, 200, {
          kind: 'APIGroupList',
          apiVersion: 'v1',
          groups: groupsInOrder().map((g) => {
            const versions = versionsOf(g).map((v) => ({ groupVersion: `${g}/${v}`, version: v }));
            return { name: g, versions, preferredVersion: versions[0] };
          }),
        });
      }
      return;
    }
    if (path === '/openapi/v3' && method === 'GET') {
      if (!openapi) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      send(res, 200, openapiRoot());
      return;
    }
    if (path.startsWith('/openapi/v3/') && method === 'GET' && openapi) {
      const rel = path.slice('/openapi/v3/'.length).split('/');
      const [g, v] = rel[0] === 'api' ? ['', rel[1] ?? ''] : [rel[1] ?? '', rel[2] ?? ''];
      if (findTypeInGv(g, v)) {
        send(res, 200, openapiDocument(g, v));
        return;
      }
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    const segments = path.split('/').filter(Boolean);
    if (segments[0] === 'api' && segments.length === 2 && method === 'GET') {
      if (segments[1] !== 'v1')
        throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      send(res, 200, resourceList('', 'v1'));
      return;
    }
    if (segments[0] === 'apis' && segments.length === 2 && method === 'GET') {
      const g = segments[1]!;
      const versions = versionsOf(g).map((v) => ({ groupVersion: `${g}/${v}`, version: v }));
      if (versions.length === 0)
        throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      send(res, 200, {
        kind: 'APIGroup',
        apiVersion: 'v1',
        name: g,
        versions,
        preferredVersion: versions[0],
      });
      return;
    }
    if (segments[0] === 'apis' && segments.length === 3 && method === 'GET') {
      if (!findTypeInGv(segments[1]!, segments[2]!)) {
        throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      }
      send(res, 200, resourceList(segments[1]!, segments[2]!));
      return;
    }
    if (segments[0] !== 'api' && segments[0] !== 'apis') {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
    const target = parseResourcePath(segments, false);
    if (target === 'notfound')
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    if (target.subresource !== undefined && !(target.subresource === 'status' && method === 'GET')) {
      throw new ApiError(405, 'MethodNotAllowed', `the stand-in does not serve ${target.subresource} writes`);
    }
    const type = target.type;
    const watch = target.watch || q.get('watch') === 'true' || q.get('watch') === '1';
    if (method === 'GET' && watch) {
      handleWatch(target, q, req, res);
      return;
    }
    if (method === 'GET' && target.name !== undefined) {
      const stored = objects.get(storeKey(type.group, type.plural, target.namespace ?? '', target.name));
      if (!stored) throw notFound(type, target.name);
      send(res, 200, external(stored, type));
      return;
    }
    if (method === 'GET') {
      send(res, 200, handleList(target, q));
      return;
    }
    if (method === 'PATCH' && target.name !== undefined) {
      if (contentType === 'application/apply-patch+yaml') {
        const r = handleApply(target, q, body);
        send(res, r.status, r.body, 'application/json', r.warnings);
      } else if (
        contentType === 'application/merge-patch+json' ||
        contentType === 'application/json-patch+json'
      ) {
        const r = handleMergePatch(target, q, body, contentType);
        send(res, r.status, r.body);
      } else {
        throw new ApiError(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
        );
      }
      return;
    }
    if (
      method === 'POST' &&
      target.name === undefined &&
      (target.namespace !== undefined) === type.namespaced
    ) {
      if (contentType !== 'application/json' && contentType !== 'application/yaml') {
        throw new ApiError(
          415,
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
        );
      }
      const r = handleCreate(target, q, body);
      send(res, r.status, r.body, 'application/json', r.warnings);
      return;
    }
    if (method === 'DELETE' && target.name !== undefined) {
      const r = handleDelete(target, q);
      send(res, r.status, r.body);
      return;
    }
    throw new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource`,
    );
  }

  function findTypeInGv(group: string, version: string): boolean {
    return types.some((t) => t.group === group && t.version === version);
  }

  const sockets = new Set<Socket>();
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    void handle(req, res);
  };
  const server: Server = cert
    ? createHttpsServer({ cert: cert.cert, key: cert.key }, listener)
    : createHttpServer(listener);
  // No idle timeout on kept-alive connections: with one, a request kubectl sends on a connection the
  // moment the stand-in closes it for idleness is lost (client-go does not resend a PATCH), and on a
  // busy machine that moment comes. Connections end when kubectl exits, or at close().
  server.keepAliveTimeout = 0;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;

  return {
    url,
    token,
    caCert: cert?.cert,
    log,
    clearLog: () => {
      log.length = 0;
    },
    writeKubeconfig(dir, kc = {}) {
      const cluster: Json = { server: url };
      if (cert) cluster['certificate-authority-data'] = Buffer.from(cert.cert).toString('base64');
      const contexts = [
        {
          name: 'standin',
          context: { cluster: 'standin', user: 'standin', namespace: kc.namespace ?? 'default' },
        },
        ...Object.entries(kc.contexts ?? {}).map(([name, namespace]) => ({
          name,
          context: { cluster: 'standin', user: 'standin', namespace },
        })),
      ];
      const config = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'standin', cluster }],
        users: [{ name: 'standin', user: tls ? { token: kc.wrongToken ? 'wrong' : token } : {} }],
        contexts,
        'current-context': 'standin',
      };
      const file = join(dir, 'kubeconfig');
      writeFileSync(file, formatYaml(config), { mode: 0o600 });
      return file;
    },
    get(apiVersion, kind, namespace, name) {
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      const type = types.find((t) => t.group === group && t.version === version && t.kind === kind);
      if (!type) return undefined;
      const stored = objects.get(
        storeKey(type.group, type.plural, type.namespaced ? (namespace ?? 'default') : '', name),
      );
      return stored ? external(stored, type) : undefined;
    },
    objects: () => [...objects.values()].map((s) => external(s)),
    setReady(kind, namespace, name, ready) {
      readiness.set(`${kind}/${namespace}/${name}`, ready);
      for (const stored of objects.values()) {
        const m = meta(stored.object);
        if (stored.type.kind === kind && m.namespace === namespace && m.name === name) writeStatus(stored);
      }
    },
    setReadyByDefault(ready) {
      readyByDefault = ready;
    },
    compact() {
      compactedRv = rv;
      events.length = 0;
    },
    establish(crdName) {
      if (!objects.has(storeKey('apiextensions.k8s.io', 'customresourcedefinitions', '', crdName)))
        throw new Error(`the stand-in has no CustomResourceDefinition ${crdName}`);
      establish(crdName);
    },
    finalizeNamespace(name) {
      const ns = namespaceExists(name);
      if (!ns || !meta(ns.object).deletionTimestamp)
        throw new Error(`the stand-in has no Terminating namespace ${name}`);
      finalizeNamespace(name);
    },
    nextRequest(match) {
      return new Promise((resolve) => requestWaiters.add({ match, resolve }));
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** JSON merge patch (RFC 7386). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Json = isObject(target) ? structuredClone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** JSON patch (RFC 6902): add, replace, remove, test. */
function jsonPatch(target: Json, ops: unknown[]): Json {
  const out = structuredClone(target);
  for (const op of ops) {
    if (!isObject(op) || typeof op.path !== 'string')
      throw new ApiError(400, 'BadRequest', 'invalid json patch operation');
    const parts = op.path
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop();
    let node: unknown = out;
    for (const p of parts) node = isObject(node) || Array.isArray(node) ? (node as Json)[p] : undefined;
    if (last === undefined || !(isObject(node) || Array.isArray(node))) {
      throw new ApiError(422, 'Invalid', `jsonpatch: path ${op.path} does not exist`);
    }
    const parent = node as Json;
    if (op.op === 'add' || op.op === 'replace') parent[last] = structuredClone(op.value);
    else if (op.op === 'remove') delete parent[last];
    else if (op.op === 'test') {
      if (!deepEqual(parent[last], op.value))
        throw new ApiError(422, 'Invalid', `jsonpatch: test failed at ${op.path}`);
    } else throw new ApiError(400, 'BadRequest', `jsonpatch: unsupported op ${String(op.op)}`);
  }
  return out;
}
