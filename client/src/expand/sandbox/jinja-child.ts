/**
 * Entry of the Jinja rendering process (render-sandbox.ts): started with Node's permission
 * model, it renders one request at a time and answers over the IPC channel. It also validates
 * properties against templates' schemas (schema-validation.ts), which are as untrusted as the
 * templates.
 */
import { DmError, isDmError } from '../../error.js';
import { fromWire, hasPythonValues, toWire } from '../../python/values.js';
import { JinjaRenderError, renderJinja } from '../jinja/compat.js';
import { parseRenderedYaml } from '../rendered-yaml.js';
import { parseTemplateSchema } from '../schema.js';
import type { SchemaValidationMode, TemplateFile } from '../types.js';
import { LoadAfterReady } from './load-after-ready.js';

/** Schema validation (Ajv), loaded once this process said it is ready (load-after-ready.ts). */
let schemaValidation: LoadAfterReady<typeof import('../schema-validation.js'), Request>;

interface Request {
  id: number;
  name: string;
  /** Absent when it is the file of that name in the file set. */
  source?: string;
  context: Record<string, unknown>;
  /** Sent once per file set; later requests name the set by `filesId`. */
  files?: Record<string, string>;
  filesId: number;
  importsAreFiles?: boolean;
  /** The context is in the wire form (python/values.ts). */
  wire?: boolean;
  /** Parse the output as YAML here and answer with the data (source names it in errors). */
  parse?: { source: string; maxNodes: number };
  /** Not a template: validate `context.properties` against the schema file `name`. */
  schema?: { subject: string; mode: SchemaValidationMode };
  /** Answer with the CPU time of the work (`ms`). */
  time?: boolean;
}

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

/** Validates properties against a schema; answers with the completed properties or the DmError. */
function validate(
  { applySchema }: typeof import('../schema-validation.js'),
  request: Request,
  files: Record<string, string>,
  schema: NonNullable<Request['schema']>,
): void {
  const given = (request.wire ? fromWire(request.context) : request.context) as {
    properties: Record<string, unknown>;
  };
  const timed = request.time === true;
  const t0 = timed ? cpuMs() : 0;
  try {
    const violations: string[] = [];
    const properties = applySchema(
      parseTemplateSchema(
        schemaFile(request.filesId, request.name, request.source ?? files[request.name] ?? ''),
      ),
      given.properties,
      schema.subject,
      schema.mode,
      (message) => violations.push(message),
    );
    const ms = timed ? { ms: [cpuMs() - t0, 0] } : {};
    if (hasPythonValues(properties))
      answer({ id: request.id, ok: true, data: toWire(properties), wire: true, violations, ...ms });
    else answer({ id: request.id, ok: true, data: properties, violations, ...ms });
  } catch (thrown) {
    // A schema that breaks Ajv itself (too deep to compile, …) is reported as an invalid schema.
    const error = isDmError(thrown)
      ? thrown
      : new DmError(
          'INVALID_SCHEMA',
          `${request.name}: the schema is invalid: ${thrown instanceof Error ? thrown.message : String(thrown)}`,
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
  }
}

function answer(message: Record<string, unknown>): void {
  process.send?.(message);
}

function handle(request: Request): void {
  try {
    if (request.files) fileSets.set(request.filesId, request.files);
    const files = fileSets.get(request.filesId) ?? {};
    if (request.schema) {
      const module = schemaValidation.module;
      if (module) validate(module, request, files, request.schema);
      else {
        const message = `cannot validate against a schema: ${schemaValidation.failure}`;
        answer({ id: request.id, ok: false, kind: 'runtime', message, file: request.name, line: null });
      }
      return;
    }
    const given = request.wire ? (fromWire(request.context) as Record<string, unknown>) : request.context;
    const context = request.importsAreFiles ? { ...given, imports: files } : given;
    const timed = request.time === true;
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
        const ms = timed ? { ms: [t1 - t0, cpuMs() - t1] } : {};
        if (hasPythonValues(data))
          answer({ id: request.id, ok: true, data: toWire(data), wire: true, ...ms });
        else answer({ id: request.id, ok: true, data, ...ms });
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
    answer({ id: request.id, ok: true, text, ...(timed ? { ms: [t1 - t0, 0] } : {}) });
  } catch (error) {
    if (error instanceof JinjaRenderError) {
      let kind: string = error.kind;
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

process.on('disconnect', () => process.exit(0));
answer({ ready: true });
schemaValidation = new LoadAfterReady(
  () => import('../schema-validation.js'),
  (request) => request.schema !== undefined,
  handle,
);
// Requests come in batches (those the main process dispatched together), answered one by one.
process.on('message', (raw: unknown) => {
  for (const request of raw as Request[]) schemaValidation.take(request);
});
