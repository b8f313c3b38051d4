/**
 * Entry of the Jinja rendering process (render-sandbox.ts): started with Node's permission
 * model, it renders one request at a time and answers over the IPC channel. It also validates
 * properties against templates' schemas (schema-validation.ts), which are as untrusted as the
 * templates.
 *
 * Run by `node --build-snapshot` (renderer-snapshot.ts; docs/expansion.md, "Speed"), it loads
 * schema validation and warms the engine up on templates of its own instead, and the process
 * started from that snapshot serves at once. Started with the warm option (RENDERER_WARM_ARG,
 * render-sandbox.ts startRenderersEarly), it loads schema validation and serves a longer warm-up
 * of its own (renderer-warm-up.ts) before it says it is ready.
 */
import { startupSnapshot } from 'node:v8';
import { DmError, isDmError } from '../../error.js';
import { fromWire, hasPythonValues, toWire } from '../../python/values.js';
import { JinjaRenderError, renderJinja } from '../jinja/compat.js';
import { parseRenderedYaml } from '../rendered-yaml.js';
import { parseTemplateSchema } from '../schema.js';
import type { TemplateFile } from '../types.js';
import { LoadAfterReady } from './load-after-ready.js';
import {
  RENDERER_WARM_ARG,
  type RenderAnswer,
  type RenderFailure,
  type RenderReady,
  type JinjaRequest as Request,
} from './render-protocol.js';
import { SNAPSHOT_WARM_UP, startedWarmUp, type WarmUpSize, warmUp } from './renderer-warm-up.js';

type SchemaValidation = typeof import('../schema-validation.js');

/** Schema validation (Ajv), loaded once this process said it is ready (load-after-ready.ts). */
let schemaValidation: LoadAfterReady<SchemaValidation, Request> | undefined;

/** Where answers go: the IPC channel, or the warm-up's own check (renderer-warm-up.ts). */
type Reply = (message: RenderAnswer) => void;

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
function check(
  request: Request,
  given: Record<string, unknown>,
  timed: boolean,
  reply: Reply,
  module: SchemaValidation | undefined,
): Checked {
  if (!module) {
    const message = `cannot validate against a schema: ${schemaValidation?.failure ?? 'not loaded'}`;
    reply({ id: request.id, ok: false, kind: 'runtime', message, file: request.name, line: null });
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
    reply({
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

/**
 * Serves one request, answering through `reply` (the IPC channel) with schema validation
 * `validation` (the module loaded after ready).
 */
function handle(request: Request, reply: Reply = answer, validation = schemaValidation?.module): void {
  try {
    if (request.files) fileSets.set(request.filesId, request.files);
    const files = fileSets.get(request.filesId) ?? {};
    let given = request.wire ? (fromWire(request.context) as Record<string, unknown>) : request.context;
    const timed = request.time === true;
    let checked: { properties: Record<string, unknown>; violations: string[] } | undefined;
    let checkMs = 0;
    if (request.check) {
      const result = check(request, given, timed, reply, validation);
      if ('failed' in result) return;
      checked = result;
      checkMs = result.ms;
      // A check alone (RenderSandbox.applySchema): the properties are the answer.
      if (request.check.only) {
        reply({
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
          reply({ id: request.id, ok: true, data: toWire(data), wire: true, ...extra, ...ms });
        else reply({ id: request.id, ok: true, data, ...extra, ...ms });
      } catch (error) {
        const e = error as DmError;
        reply({
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
    reply({
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
      reply({ id: request.id, ok: false, kind, message, file: request.name, line: error.lineno ?? null });
    } else {
      const message = error instanceof Error ? error.message : String(error);
      const limit = error instanceof RangeError;
      reply({
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
 * Serves the warm-up's requests (renderer-warm-up.ts) with this process's own handler and
 * `validation`; then nothing of them is left: their file sets and schema files are dropped, the
 * caches they filled emptied. Returns the number of requests served.
 */
function warm(size: WarmUpSize, validation: SchemaValidation): number {
  return warmUp(size, (request, reply) => handle(request, reply, validation), {
    dropFileSets: (ids) => {
      for (const id of ids) fileSets.delete(id);
      for (const key of [...schemaFiles.keys()])
        if (ids.includes(Number(key.slice(0, key.indexOf('\u0000'))))) schemaFiles.delete(key);
    },
    clearValidators: validation.clearValidators,
  });
}

/**
 * Starts serving: with the warm option (RENDERER_WARM_ARG among its arguments), loads schema
 * validation and warms up first; then says it is ready (naming the snapshot it was started from,
 * if any, for the sandbox to check), and takes requests from the IPC channel. A warm-up that fails
 * is told on stderr and the process serves as one started without it; one that ran says how many
 * requests it served (`warmUp` in the ready message).
 */
async function serve(load: () => Promise<SchemaValidation>, snapshot?: string): Promise<void> {
  process.on('disconnect', () => process.exit(0));
  let loaded: SchemaValidation | undefined;
  let warmedUp = 0;
  if (process.argv.slice(1).includes(RENDERER_WARM_ARG)) {
    try {
      loaded = await load();
      warmedUp = warm(startedWarmUp(), loaded);
    } catch (error) {
      process.stderr.write(`the warm-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
  answer({ ready: true, ...(snapshot ? { snapshot } : {}), ...(warmedUp ? { warmUp: warmedUp } : {}) });
  const validation = new LoadAfterReady(
    loaded ? async () => loaded : load,
    (request: Request) => request.check !== undefined,
    (request) => handle(request),
  );
  schemaValidation = validation;
  // Requests come in batches (those the main process dispatched together), answered one by one.
  process.on('message', (raw: unknown) => {
    for (const request of raw as Request[]) validation.take(request);
  });
}

if (startupSnapshot?.isBuildingSnapshot()) {
  // `--build-snapshot <this file> <digest>`: the digest of this file, said back at every start.
  const digest = process.argv[2] ?? '';
  void import('../schema-validation.js').then((validation) => {
    warm(SNAPSHOT_WARM_UP, validation);
    startupSnapshot.setDeserializeMainFunction(() => void serve(async () => validation, digest));
  });
} else {
  void serve(() => import('../schema-validation.js'));
}
