/**
 * `dm blueprint render` engine speed: the 16 conformance cases rendered through one warm
 * sandbox, next to the same execution templates rendered in-process by the expansion engine's
 * Jinja (no sandbox, no pipeline) in the same run: the ratio is the cost of the sandbox's IPC
 * plus the blueprint pipeline (imports, schemas, ordering, YAML).
 * Run: npm run build && node dist/bench/blueprint.js [rounds]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BlueprintSandbox, inputsFromDocument, renderBlueprint } from '../client/src/blueprint/index.js';
import { parseYaml } from '../client/src/document/yaml.js';
import { renderJinja } from '../client/src/expand/jinja/compat.js';

const rounds = Number(process.argv[2] ?? 20);
const root = fileURLToPath(new URL('../../', import.meta.url));
const casesDir = resolve(root, '../shared/conformance/blueprints');

type Obj = Record<string, unknown>;
const jinja = (files: Obj) =>
  Object.fromEntries(
    Object.entries(files).map(([k, v]) => [k, String(v).replace(/type:(\s*)GoTemplate\b/g, 'type:$1Jinja')]),
  );

const cases = readdirSync(casesDir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => {
    const doc = parseYaml(readFileSync(join(casesDir, f), 'utf8')) as Obj;
    const blueprints: Obj = {};
    for (const [k, e] of Object.entries((doc.blueprints as Obj) ?? {}))
      blueprints[k] = { ...(e as Obj), files: jinja((e as Obj).files as Obj) };
    return inputsFromDocument({ ...doc, blueprint: jinja(doc.blueprint as Obj), blueprints }, f);
  });

// Every template text of the cases (files and inline templates), for the in-process baseline.
const templates: string[] = [];
for (const c of cases) {
  for (const text of Object.values(c.blueprint ?? {}))
    if (text.includes('{{') || text.includes('{%')) templates.push(text);
}

const sandbox = new BlueprintSandbox();
const context = { imports: { numofsubinsts: 3, items: [] }, cd: null, deployitems: {}, dataobjects: {} };
const times: number[] = [];
const base: number[] = [];
let renders = 0;
for (let r = 0; r < rounds + 2; r++) {
  let start = process.hrtime.bigint();
  for (const c of cases) await renderBlueprint(c.blueprint ?? {}, c.inputs, { renderer: sandbox });
  const t = Number(process.hrtime.bigint() - start) / 1e6;
  start = process.hrtime.bigint();
  for (const [i, t2] of templates.entries()) {
    try {
      renderJinja(t2, context, { name: `t${i}` });
    } catch {
      // undefined values in the baseline's fixed context: the work is done all the same
    }
    renders++;
  }
  const b = Number(process.hrtime.bigint() - start) / 1e6;
  if (r >= 2) {
    times.push(t);
    base.push(b);
  }
}
sandbox.close();
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `rounds: ${rounds}, cases: ${cases.length}, template files: ${templates.length} (${renders} baseline renders)`,
);
console.log(
  `16 cases through the sandbox   p50 ${p50(times).toFixed(1)} ms  (${(p50(times) / cases.length).toFixed(2)} ms per case)`,
);
console.log(`their templates in-process     p50 ${p50(base).toFixed(2)} ms`);
console.log(`ratio sandboxed pipeline / in-process templates: ${(p50(times) / p50(base)).toFixed(1)}×`);
