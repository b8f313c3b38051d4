/**
 * The Jinja rendering process's warm-up (docs/expansion.md, "Speed"): requests of its own, made of
 * templates and a schema that are dm's (never a user's), served by the process's own request
 * handler (jinja-child.ts) as a run's requests are: a schema check with defaults, a rendering with
 * an import and a macro, the rendering read as YAML, the answer encoded as the IPC channel encodes
 * it. Run once while the startup snapshot is built (renderer-snapshot.ts), so that the code is
 * compiled in the snapshot; run for many rounds by a process started with the warm option
 * (render-sandbox.ts, startRenderersEarly), before it says it is ready, so that V8 has optimised
 * the hot paths before a run's first request.
 *
 * Nothing of it stays where a request could see it: its file sets have negative numbers (a run's
 * are positive, fork-renderer.ts sentOnceId) and are dropped after, and the caches it filled
 * (compiled templates and environments, schema validators and the Ajv instance, the YAML reader's
 * scalars) are emptied (forgetWarmUp), as they were before it ran.
 */

import { isDeepStrictEqual } from 'node:util';
import { serialize } from 'node:v8';
import { clearScalarCaches } from '../../document/yaml.js';
import { fromWire, toPlain, toWire } from '../../python/values.js';
import { clearTemplateCaches } from '../jinja/compat.js';
import type { JinjaRequest, RenderAnswer } from './render-protocol.js';

const MACROS = `{% macro labels(map, extra={}) -%}
{% for k, v in map.items() | list + extra.items() | list %}
        {{ k }}: {{ v | string | tojson }}
{% endfor %}
{%- endmacro %}`;

const TEMPLATE = `{% import 'macros.jinja' as m %}
{% set name = env.name | default('x') %}
{% set ports = [] %}
{% for p in range(properties.replicas) %}{% if ports.append(properties.port + p) %}{% endif %}{% endfor %}
resources:
- name: {{ name }}-svc
  type: Service
  properties:
    metadata:
      labels:
{{ m.labels(properties.labels, {'tier': 'web'}) }}
    ports: {{ ports | tojson }}
    protocol: {{ properties.protocol | upper }}
{% if properties.enabled and ports | length > 1 %}
    note: "{{ name | replace('-', '_') }} has {{ '%d' % (ports | length) }} ports"
{% elif not properties.enabled %}
    note: off
{% else %}
    note: {{ [name, 'one'] | join(' ') }}
{% endif %}
{% if env.block %}
    script: |
{{ properties.script | indent(6, true) }}
{% else %}
    script: {{ properties.script | replace('\n', '; ') }}
{% endif %}
    containers:
    - name: main
      image: nginx:1.25
      ports:
      - containerPort: {{ properties.port }}
        protocol: {{ properties.protocol }}
    ratio: {{ (properties.port / 3) | round(2) }}
`;

const SCHEMA = `info:
  title: warm-up
definitions:
  port: {type: integer, minimum: 1, maximum: 65535, default: 8080}
properties:
  replicas: {type: integer, minimum: 1, default: 2}
  port: {$ref: '#/definitions/port'}
  protocol: {type: string, enum: [tcp, udp], default: tcp}
  enabled: {type: boolean, default: true}
  labels: {type: object, additionalProperties: {type: string}, default: {app: warm}}
  script: {type: string, pattern: '^[a-z]', default: "echo one\\necho two"}
  tags: {type: array, items: {type: string}, uniqueItems: true}
required: [port]
`;

/** How much of it: rounds (each compiles the templates and the schema anew) of `requests` each. */
export interface WarmUpSize {
  rounds: number;
  requests: number;
}

/** While the startup snapshot is built: the code compiled once. */
export const SNAPSHOT_WARM_UP: WarmUpSize = { rounds: 1, requests: 1 };

/**
 * With the warm option (startRenderersEarly): enough for V8 to optimise what a run of a hundred
 * resources runs most (bench/renderer-warm.ts; the figures are in docs/expansion.md, "Speed").
 * Node 22 runs V8 without Maglev, its middle tier, and optimises only later: it needs more.
 */
export function startedWarmUp(nodeMajor = Number(process.versions.node.split('.')[0])): WarmUpSize {
  return nodeMajor >= 24 ? { rounds: 3, requests: 60 } : { rounds: 6, requests: 100 };
}

/** What the request for `port` must be answered with (data; properties checked). */
function expected(port: number, block: boolean): { data: unknown; properties: unknown } {
  const properties = {
    port,
    tags: ['a', 'b'],
    replicas: 2,
    protocol: 'tcp',
    enabled: true,
    labels: { app: 'warm' },
    script: 'echo one\necho two',
  };
  const data = {
    resources: [
      {
        name: 'warm-up-svc',
        type: 'Service',
        properties: {
          metadata: { labels: { app: 'warm', tier: 'web' } },
          ports: [port, port + 1],
          protocol: 'TCP',
          note: 'warm_up has 2 ports',
          script: block ? 'echo one\necho two\n' : 'echo one; echo two',
          containers: [
            { name: 'main', image: 'nginx:1.25', ports: [{ containerPort: port, protocol: 'tcp' }] },
          ],
          ratio: Math.round((port / 3) * 100) / 100,
        },
      },
    ],
  };
  return { data, properties };
}

/**
 * The warm-up's requests of one round: the first carries the file sets (numbered -2r-1 and
 * -2r-2), the others name them, as a run's requests do; the sources differ from round to round
 * (a comment), so each round compiles them anew. Every third request's context travels in the
 * wire form, every fifth is a schema check alone.
 */
function roundRequests(round: number, count: number): JinjaRequest[] {
  const filesId = -2 * round - 1;
  const schemaFilesId = -2 * round - 2;
  const files = {
    'macros.jinja': `${MACROS}{# ${round} #}`,
    'warm-up.jinja': `${TEMPLATE}{# ${round} #}`,
  };
  const schemaFiles = { 'warm-up.schema': `${SCHEMA}# ${round}\n` };
  const requests: JinjaRequest[] = [];
  for (let i = 0; i < count; i++) {
    // Every fourth rendering has a block scalar (read by js-yaml), the others are of the shapes
    // the fast reader takes (rendered-yaml.ts).
    const env = { name: 'warm-up', deployment: 'd', ...(i % 4 === 3 ? { block: true } : {}) };
    const context = { properties: { port: 8000 + i, tags: ['a', 'b'] }, env };
    const wire = i % 3 === 2;
    requests.push({
      id: -(i + 1),
      name: 'warm-up.jinja',
      context: wire ? (toWire(context) as Record<string, unknown>) : context,
      ...(wire ? { wire: true } : {}),
      filesId,
      ...(i === 0 ? { files, schemaFiles } : {}),
      schema: 'warm-up.schema',
      schemaFilesId,
      check: { subject: 'warm-up (warm-up.jinja)', mode: 'strict', ...(i % 5 === 4 ? { only: true } : {}) },
      parse: { source: 'warm-up.jinja', maxNodes: 10_000 },
      ...(i % 2 === 1 ? { time: true } : {}),
    });
  }
  return requests;
}

/** Whether `answer` is what the warm-up's request must be answered with. */
function answeredRight(request: JinjaRequest, answer: RenderAnswer | undefined): boolean {
  if (!answer?.ok || answer.id !== request.id) return false;
  const { properties: given, env } = fromWire(request.context) as {
    properties: { port: number };
    env: { block?: boolean };
  };
  const want = expected(given.port, env.block === true);
  const properties = answer.propertiesWire ? fromWire(answer.properties) : answer.properties;
  if (!isDeepStrictEqual(properties, want.properties)) return false;
  if (request.check?.only) return answer.data === undefined;
  const data = answer.wire ? fromWire(answer.data) : answer.data;
  // A ratio with an integral value is a Python float (wire form); compared as its number.
  return isDeepStrictEqual(toPlain(data), want.data);
}

/**
 * Serves the warm-up's requests with `handle` (the process's own request handler, answering
 * through `reply`), encodes each answer as the IPC channel does, and throws if one is not what it
 * must be. Then drops its file sets (`dropFileSets`, the handler's) and empties the caches it
 * filled, with `clearValidators` (schema validation's, loaded by the caller). Returns the number
 * of requests served.
 */
export function warmUp(
  size: WarmUpSize,
  handle: (request: JinjaRequest, reply: (answer: RenderAnswer) => void) => void,
  forget: { dropFileSets: (ids: number[]) => void; clearValidators: () => void },
): number {
  const ids: number[] = [];
  let served = 0;
  try {
    for (let round = 0; round < size.rounds; round++) {
      for (const request of roundRequests(round, size.requests)) {
        ids.push(request.filesId, request.schemaFilesId as number);
        let answer: RenderAnswer | undefined;
        handle(request, (a) => {
          serialize(a);
          answer = a;
        });
        if (!answeredRight(request, answer))
          throw new Error(`the warm-up's request ${request.id} was answered ${JSON.stringify(answer)}`);
        served++;
      }
    }
    return served;
  } finally {
    forget.dropFileSets([...new Set(ids)]);
    forget.clearValidators();
    clearTemplateCaches();
    clearScalarCaches();
  }
}
