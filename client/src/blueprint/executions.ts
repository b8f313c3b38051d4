/**
 * The one execution runner (docs/blueprints.md "Templates"): every blueprint execution (import,
 * subinstallation, deploy and export executions) and every data mapping renders here, through
 * the run's TemplateRenderer (the sandbox), with the same error translation. The phases decide
 * what to do with the outputs. Import and export values are validated against their schemas
 * here too, in the same sandbox (checkSchema).
 */

import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { BlueprintError, type Phase } from './errors.js';
import { type Execution, filePath } from './model.js';
import { TemplateFailure } from './sandbox.js';
import type { SchemaScope } from './schema.js';
import type { InstallationNode, Obj, RunEnv } from './scope.js';

/** The bindings of every execution: `imports`, `cd`, `components`, `blueprintDef`… */
export function standardBinding(node: InstallationNode, imports: Obj): Obj {
  const cd = node.cd ?? null;
  return {
    imports,
    cd,
    components: cd === null ? [] : [cd],
    blueprintDef: node.spec.blueprint ?? null,
    blueprint: node.spec.blueprint ?? null,
    componentDescriptorDef: node.spec.componentDescriptor ?? null,
  };
}

/** A render failure as the BlueprintError of `phase` (`template` when a template function failed). */
function renderFailure(phase: Phase, execution: string, error: unknown): never {
  if (error instanceof TemplateFailure) {
    throw new BlueprintError(
      error.templateFunction ? 'template' : phase,
      `execution ${execution}: ${error.message}`,
      {
        details: error.line ? { execution, line: error.line } : { execution },
      },
    );
  }
  if (error instanceof BlueprintError) throw error;
  if (error instanceof DmError) {
    throw new BlueprintError(phase, `execution ${execution}: ${error.message}`, {
      category: error.category,
      details: { execution },
    });
  }
  throw error;
}

async function runExecution(
  env: RunEnv,
  node: InstallationNode,
  exec: Execution,
  phase: Phase,
  binding: Obj,
): Promise<Obj> {
  if (exec.type !== 'Jinja') {
    throw new BlueprintError(
      phase,
      `execution ${exec.name}: type '${exec.type}' is not supported; dm renders executions of type Jinja`,
    );
  }
  let source = exec.template;
  if (source === undefined) {
    source = node.files[filePath(exec.file ?? '')];
    if (source === undefined) {
      throw new BlueprintError(phase, `execution ${exec.name}: no file '${exec.file}' in the blueprint`);
    }
  }
  const name = `${node.path}/${exec.name}`;
  let text: string;
  try {
    text = await env.renderer.renderText({ name, source, context: binding, files: node.files });
  } catch (error) {
    renderFailure(phase, exec.name, error);
  }
  let out: unknown;
  try {
    out = parseYaml(text, { source: name });
  } catch (error) {
    throw new BlueprintError(
      phase,
      `execution ${exec.name}: its output is not YAML: ${(error as Error).message}`,
    );
  }
  if (out === null || out === undefined) return {};
  if (!isMapping(out))
    throw new BlueprintError(phase, `execution ${exec.name}: its output must be a YAML mapping`);
  return out;
}

/**
 * Runs `executions` in order and yields each one's output mapping. `binding` is asked for just
 * before each execution, so what the consumer did with the previous output (import executions'
 * `bindings`) is visible to the next one. Stopping the iteration stops the loop.
 */
export async function* runExecutions(
  env: RunEnv,
  node: InstallationNode,
  phase: Phase,
  executions: readonly Execution[],
  binding: () => Obj,
): AsyncGenerator<{ execution: Execution; output: Obj }> {
  for (const execution of executions) {
    yield { execution, output: await runExecution(env, node, execution, phase, binding()) };
  }
}

/** The list under `key` of an execution's output (none → empty); anything else is an error. */
export function listOutput(output: Obj, key: string, execution: Execution, phase: Phase): unknown[] {
  const value = output[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new BlueprintError(phase, `execution ${execution.name}: ${key} must be a list`);
  return value;
}

/**
 * An import or export data mapping (docs/blueprints.md "Templates"), walked through maps and
 * lists: a string that is exactly one `{{ expr }}` gives the expression's native value, any
 * other string with `{{` or `{%` renders as text, everything else is taken literally.
 */
export async function evaluateMapping(
  env: RunEnv,
  node: InstallationNode,
  value: unknown,
  bindings: Obj,
  what: string,
  phase: Phase,
): Promise<unknown> {
  if (typeof value === 'string') {
    const single = /^\s*\{\{([\s\S]*)\}\}\s*$/.exec(value);
    const request = { name: `${node.path}/${what}`, context: bindings, files: node.files };
    try {
      if (single?.[1] !== undefined && !single[1].includes('}}') && !single[1].includes('{{')) {
        return await env.renderer.renderValue({ ...request, expression: single[1] });
      }
      if (value.includes('{{') || value.includes('{%')) {
        return await env.renderer.renderText({ ...request, source: value });
      }
    } catch (error) {
      renderFailure(phase, what, error);
    }
    return value;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [i, v] of value.entries())
      out.push(await evaluateMapping(env, node, v, bindings, `${what}[${i}]`, phase));
    return out;
  }
  if (isMapping(value)) {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value))
      out[k] = await evaluateMapping(env, node, v, bindings, `${what}.${k}`, phase);
    return out;
  }
  return value;
}

/**
 * Validates an import or export value against its schema in the run's sandbox
 * (docs/blueprints.md, "Sandbox"); `what` is `import <name>` or `export <name>`. Violations fail
 * in `phase` naming the installation and the value; a schema or reference that cannot be used
 * is the `schema` error the validator raised; a time or memory limit fails in `phase` as a limit.
 */
export async function checkSchema(
  env: RunEnv,
  node: InstallationNode,
  phase: Phase,
  what: string,
  value: unknown,
  schema: unknown,
  scope: SchemaScope,
): Promise<void> {
  let problems: string[];
  try {
    problems = await env.renderer.validate({ value, schema, scope, what });
  } catch (error) {
    if (error instanceof BlueprintError) throw error;
    if (error instanceof DmError || error instanceof TemplateFailure) {
      const limit = error instanceof DmError ? error.category === 'limit' : error.kind === 'limit';
      throw new BlueprintError(phase, `${node.path}: ${what}: schema: ${error.message}`, {
        ...(limit ? { category: 'limit' } : {}),
      });
    }
    throw error;
  }
  if (problems.length > 0) throw new BlueprintError(phase, `${node.path}: ${what}: ${problems.join('; ')}`);
}
