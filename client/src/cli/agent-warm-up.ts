/**
 * The expansion agent's warm-up (docs/client.md, "The expansion agent"): before it serves its first
 * run, the agent expands a configuration of dm's own a few times, so that V8 has compiled and
 * optimised the code every run takes (reading the configuration, the rendering processes' IPC,
 * schema defaults, layout, writing the output) and the user's first served run is not the one that
 * pays for it. dm's own input, in a directory of the agent's that it removes after; its rendering
 * processes are its own, ended with it, as every run's are.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCHEMA = `info:
  title: service
properties:
  size: {type: integer, minimum: 1, default: 1}
  zone: {type: string, default: a}
  tags: {type: array, items: {type: string}}
  options: {type: object}
required: [tags]
`;

const SERVICE = `{% set prefix = env.deployment ~ '-' ~ env.name %}
resources:
- name: {{ prefix }}
  type: {{ 'group.py' if properties.size > 1 else 'Instance' }}
  properties:
    size: {{ properties.size }}
    zone: {{ properties.zone | upper }}
    tags: {{ properties.tags | tojson }}
{% if properties.options %}
    options:
{% for key, value in properties.options | dictsort %}
      {{ key }}: {{ value | string | replace('_', '-') }}
{% endfor %}
{% endif %}
`;

const GROUP = `def GenerateConfig(context):
    members = []
    for i in range(context.properties['size']):
        members.append({'name': '%s-%d' % (context.env['name'], i), 'type': 'member.jinja',
                        'properties': {'index': i, 'zone': context.properties['zone'],
                                       'tags': sorted(context.properties['tags'])}})
    return {'resources': members, 'outputs': [{'name': 'count', 'value': len(members)}]}
`;

const MEMBER = `resources:
- name: {{ env.name }}
  type: Instance
  properties:
    index: {{ properties.index }}
    zone: {{ properties.zone }}
    labels:
{% for tag in properties.tags %}
      {{ tag }}: "{{ loop.index }}"
{% endfor %}
`;

function configuration(n: number): string {
  let out = 'imports:\n- path: service.jinja\n- path: group.py\n- path: member.jinja\nresources:\n';
  for (let i = 0; i < n; i++) {
    out += `- name: s${i}\n  type: service.jinja\n  properties: {size: ${1 + (i % 3)}, tags: [t${i % 5}, web], options: {max_conn: ${i}, mode: on_demand}}\n`;
  }
  return out;
}

/**
 * Expands the warm-up configuration `times` times through `run` (the CLI, output thrown away),
 * its files written into `dir` (the caller's, who removes it).
 */
export async function warmUp(
  dir: string,
  run: (args: string[], cwd: string) => Promise<unknown>,
  times = 3,
): Promise<void> {
  writeFileSync(join(dir, 'config.yaml'), configuration(60));
  writeFileSync(join(dir, 'service.jinja'), SERVICE);
  writeFileSync(join(dir, 'service.jinja.schema'), SCHEMA);
  writeFileSync(join(dir, 'group.py'), GROUP);
  writeFileSync(join(dir, 'member.jinja'), MEMBER);
  for (let i = 0; i < times; i++) await run(['expand', 'config.yaml', '-o', i % 2 ? 'json' : 'yaml'], dir);
}
