/**
 * Entry of the Jinja rendering process (render-sandbox.ts): started with Node's permission
 * model, it renders one request at a time and answers over the IPC channel. It also validates
 * properties against templates' schemas (schema-validation.ts), which are as untrusted as the
 * templates.
 *
 * Run by `node --build-snapshot` (renderer-snapshot.ts; docs/expansion.md, "Speed"), it loads
 * schema validation and warms the engine up on templates of its own instead, and the process
 * started from that snapshot serves at once.
 */
import { startupSnapshot } from 'node:v8';
import { DmError, isDmError } from '../../error.js';
import { fromWire, hasPythonValues, toWire } from '../../python/values.js';
import { JinjaRenderError, renderJinja } from '../jinja/compat.js';
import { parseRenderedYaml } from '../rendered-yaml.js';
import { parseTemplateSchema } from '../schema.js';
import type { TemplateFile } from '../types.js';
import { LoadAfterReady } from './load-after-ready.js';
import type { RenderAnswer, RenderFailure, RenderReady, JinjaRequest as Request } from './render-protocol.js';
import { warmUp } from './renderer-warm-up.js';

/** Schema validation (Ajv), loaded once this process said it is ready (load-after-ready.ts). */
let schemaValidation: LoadAfterReady<typeof import('../schema-validation.js'), Request>;

/** This process's CPU time in ms (what the sandbox's timings add up). */
function cpuMs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

const fileSets = new Map<number, Record<string, string>>();
/** One TemplateFile per schema sent (what schema.ts keeps its parse of, per run). */
const schemaFiles = new Map<string, TemplateFile>();

function schemaFile(filesId: number, path: string, content: string): TemplateFile {
  const key = `${filesId}\u0000${path}`;
  let file = schemaFiles.get(key);
  if (!file || file.content !== content) {
    file = { name: path, path, content };
    schemaFiles.set(key, file);
  }
  return file;
}

/** The properties checked against the request's schema, or the answer to send instead. */
type Checked = { properties: Record<string, unknown>; violations: string[]; ms: number } | { failed: true };

/** Checks `context.properties` against the request's schema (schema-validation.ts); answers a failure itself. */
function check(request: Request, given: Record<string, unknown>, timed: boolean): Checked {
  const module = schemaValidation.module;
  if (!module) {
    const message = `cannot validate against a schema: ${schemaValidation.failure}`;
    answer({ id: request.id, ok: false, kind: 'runtime', message, file: request.name, line: null });
    return { failed: true };
  }
  if (request.schemaFiles && request.schemaFilesId !== undefined)
    fileSets.set(request.schemaFilesId, request.schemaFiles);
  const path = request.schema ?? '';
  const content = fileSets.get(request.schemaFilesId ?? -1)?.[path] ?? '';
  const t0 = timed ? cpuMs() : 0;
  try {
    const violations: string[] = [];
    const properties = module.applySchema(
      parseTemplateSchema(schemaFile(request.schemaFilesId ?? -1, path, content)),
      (given.properties ?? {}) as Record<string, unknown>,
      request.check!.subject,
      request.check!.mode,
      (message) => violations.push(message),
      request.check!.ownFile === true,
    );
    return { properties, violations, ms: timed ? cpuMs() - t0 : 0 };
  } catch (thrown) {
    // A schema that breaks Ajv itself (too deep to compile, …) is reported as an invalid schema.
    const error = isDmError(thrown)
      ? thrown
      : new DmError(
          'INVALID_SCHEMA',
          `${path}: the schema is invalid: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
          { category: 'invalid-input' },
        );
    answer({
      id: request.id,
      ok: false,
      kind: 'dm-error',
      message: error.message,
      error: {
        code: error.code,
        category: error.category,
        ...(error.details ? { details: error.details } : {}),
        ...(error.hint ? { hint: error.hint } : {}),
      },
    });
    return { failed: true };
  }
}

/** What an answer carries of a check: the properties (in the wire form when needed), the violations. */
function checkedFields(checked: {
  properties: Record<string, unknown>;
  violations: string[];
}): Record<string, unknown> {
  return hasPythonValues(checked.properties)
    ? { properties: toWire(checked.properties), propertiesWire: true, violations: checked.violations }
    : { properties: checked.properties, violations: checked.violations };
}

function answer(message: RenderAnswer | RenderReady): void {
  process.send?.(message);
}

function handle(request: Request): void {
  try {
    if (request.files) fileSets.set(request.filesId, request.files);
    const files = fileSets.get(request.filesId) ?? {};
    let given = request.wire ? (fromWire(request.context) as Record<string, unknown>) : request.context;
    const timed = request.time === true;
    let checked: { properties: Record<string, unknown>; violations: string[] } | undefined;
    let checkMs = 0;
    if (request.check) {
      const result = check(request, given, timed);
      if ('failed' in result) return;
      checked = result;
      checkMs = result.ms;
      // A check alone (RenderSandbox.applySchema): the properties are the answer.
      if (request.check.only) {
        answer({
          id: request.id,
          ok: true,
          ...checkedFields(checked),
          ...(timed ? { ms: [0, 0, checkMs] } : {}),
        });
        return;
      }
      given = { ...given, properties: checked.properties };
    }
    const context = request.importsAreFiles ? { ...given, imports: files } : given;
    const t0 = timed ? cpuMs() : 0;
    const text = renderJinja(request.source ?? files[request.name] ?? '', context, {
      name: request.name,
      files,
      filesKey: request.filesId,
    });
    const t1 = timed ? cpuMs() : 0;
    if (request.parse) {
      try {
        // parseYaml holds the document to the request's node budget (aliases expanded).
        const data = parseRenderedYaml(text, {
          source: request.parse.source,
          dialect: 'pyyaml',
          maxNodes: request.parse.maxNodes,
        });
        // CPU time spent rendering and reading the rendering as YAML (the sandbox adds them up).
        const ms = timed ? { ms: [t1 - t0, cpuMs() - t1, checkMs] } : {};
        const extra = checked ? checkedFields(checked) : {};
        if (hasPythonValues(data))
          answer({ id: request.id, ok: true, data: toWire(data), wire: true, ...extra, ...ms });
        else answer({ id: request.id, ok: true, data, ...extra, ...ms });
      } catch (error) {
        const e = error as DmError;
        answer({
          id: request.id,
          ok: false,
          kind: e.category === 'limit' ? 'limit-data' : 'yaml',
          message: e.message,
          file: request.name,
          line: null,
        });
      }
      return;
    }
    answer({
      id: request.id,
      ok: true,
      text,
      ...(checked ? checkedFields(checked) : {}),
      ...(timed ? { ms: [t1 - t0, 0, checkMs] } : {}),
    });
  } catch (error) {
    if (error instanceof JinjaRenderError) {
      let kind: RenderFailure['kind'] = error.kind;
      let message = error.message;
      if (/Invalid (string|array|typed array) length|Array buffer allocation failed/.test(message)) {
        kind = 'limit';
        message = `ran out of memory (${message})`;
      }
      answer({ id: request.id, ok: false, kind, message, file: request.name, line: error.lineno ?? null });
    } else {
      const message = error instanceof Error ? error.message : String(error);
      const limit = error instanceof RangeError;
      answer({
        id: request.id,
        ok: false,
        kind: limit ? 'limit' : 'runtime',
        message,
        file: request.name,
        line: null,
      });
    }
  }
}

/**
 * Starts serving: says it is ready (naming the snapshot it was started from, if any, for the
 * sandbox to check), then takes requests from the IPC channel.
 */
function serve(load: () => Promise<typeof import('../schema-validation.js')>, snapshot?: string): void {
  process.on('disconnect', () => process.exit(0));
  answer({ ready: true, ...(snapshot ? { snapshot } : {}) });
  schemaValidation = new LoadAfterReady(load, (request) => request.check !== undefined, handle);
  // Requests come in batches (those the main process dispatched together), answered one by one.
  process.on('message', (raw: unknown) => {
    for (const request of raw as Request[]) schemaValidation.take(request);
  });
}

if (startupSnapshot?.isBuildingSnapshot()) {
  // `--build-snapshot <this file> <digest>`: the digest of this file, said back at every start.
  const digest = process.argv[2] ?? '';
  void import('../schema-validation.js').then((validation) => {
    warmUp(validation);
    startupSnapshot.setDeserializeMainFunction(() => serve(async () => validation, digest));
  });
} else {
  serve(() => import('../schema-validation.js'));
}
