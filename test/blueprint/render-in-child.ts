/**
 * Renders blueprints with one BlueprintSandbox, in a process of its own (limits.test.ts starts it
 * and kills it when it outlives its bound: a test of what could hold dm's own thread cannot run
 * in the test's process). Reads `{timeoutMs, runs: [{files, inputs}]}` on stdin and prints
 * `{results, ticks, ajvModules}`: the result of each run in order; how often a 20 ms timer of
 * this process fired during the first run (it stayed responsive); how many of Ajv's modules this
 * process loaded (schemas are validated in the rendering process, not here).
 */
import { createRequire } from 'node:module';
import { text } from 'node:stream/consumers';
import { type BlueprintInputs, BlueprintSandbox, renderBlueprint } from '../../client/src/blueprint/index.js';

interface Input {
  timeoutMs: number;
  runs: { files: Record<string, string>; inputs: BlueprintInputs }[];
}

const input = JSON.parse(await text(process.stdin)) as Input;
const sandbox = new BlueprintSandbox({ timeoutMs: input.timeoutMs });
const results: unknown[] = [];
let ticks = 0;
try {
  for (const [i, run] of input.runs.entries()) {
    const timer = i === 0 ? setInterval(() => ticks++, 20) : undefined;
    try {
      results.push(await renderBlueprint(run.files, run.inputs, { renderer: sandbox }));
    } finally {
      clearInterval(timer);
    }
  }
} finally {
  sandbox.close();
}
const cache = createRequire(import.meta.url).cache;
const ajvModules = Object.keys(cache).filter((path) => /[/\\]node_modules[/\\]ajv[/\\]/.test(path)).length;
process.stdout.write(JSON.stringify({ results, ticks, ajvModules }));
