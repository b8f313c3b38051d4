/**
 * What the Jinja rendering process does once while its startup snapshot is built
 * (renderer-snapshot.ts; docs/expansion.md, "Speed"): a rendering, a YAML read and a schema
 * check of templates of its own, so that the code they run is compiled in the snapshot and a
 * process started from it does not compile it again for its first requests. Nothing of it stays
 * where a request could see it: no file set, no environment keyed by a file set's number.
 */
import { isDeepStrictEqual } from 'node:util';
import { fromWire, toWire } from '../../python/values.js';
import { renderJinja } from '../jinja/compat.js';
import { parseRenderedYaml } from '../rendered-yaml.js';
import { parseTemplateSchema } from '../schema.js';

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
    script: |
{{ properties.script | indent(6, true) }}
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

/** Runs the engine once over its own templates; throws if it did not give what it must. */
export function warmUp(validation: typeof import('../schema-validation.js')): void {
  const schema = parseTemplateSchema({ name: 'warm-up.schema', path: 'warm-up.schema', content: SCHEMA });
  const properties = validation.applySchema(
    schema,
    { port: 8000, tags: ['a', 'b'] },
    'warm-up (warm-up.jinja)',
    'strict',
    () => {},
  );
  const context = fromWire(toWire({ properties, env: { name: 'warm-up', deployment: 'd' } }));
  const text = renderJinja(TEMPLATE, context as Record<string, unknown>, {
    name: 'warm-up.jinja',
    files: { 'macros.jinja': MACROS, 'warm-up.jinja': TEMPLATE },
  });
  const data = parseRenderedYaml(text, { source: 'warm-up.jinja', dialect: 'pyyaml', maxNodes: 10_000 });
  const expected = {
    resources: [
      {
        name: 'warm-up-svc',
        type: 'Service',
        properties: {
          metadata: { labels: { app: 'warm', tier: 'web' } },
          ports: [8000, 8001],
          protocol: 'TCP',
          note: 'warm_up has 2 ports',
          script: 'echo one\necho two\n',
          ratio: 2666.67,
        },
      },
    ],
  };
  if (!isDeepStrictEqual(data, expected))
    throw new Error(`the warm-up rendered ${JSON.stringify(data)}, not ${JSON.stringify(expected)}`);
}
