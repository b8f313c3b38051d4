/**
 * Entry of the blueprint rendering process (sandbox.ts): started with Node's permission model
 * like the expansion engine's Jinja process, it renders one execution at a time with the
 * blueprint functions of jinja-functions.ts and answers over the IPC channel. It also validates
 * import and export values against their schemas (schema-validation.ts), which are as untrusted
 * as the blueprint's templates.
 */
import { JinjaRenderError, renderJinja } from '../expand/jinja/compat.js';
import { LoadAfterReady } from '../expand/sandbox/load-after-ready.js';
import { BlueprintError } from './errors.js';
import {
  captured,
  getResource,
  installBlueprintJinja,
  makeGetResourceKey,
  resetRenderState,
  templateFunctionFailed,
} from './jinja-functions.js';
import type { SchemaScope } from './schema.js';

/** Schema validation (Ajv), loaded once this process said it is ready (load-after-ready.ts). */
let schemaValidation: LoadAfterReady<typeof import('./schema-validation.js'), Request>;

interface Request {
  id: number;
  name: string;
  source: string;
  context: Record<string, unknown>;
  files: Record<string, string>;
  /** Answer with the value the `__dm_capture` filter saw instead of the text. */
  capture?: boolean;
  /** Not a template: validate `value` against `schema`, its references resolved in a scope. */
  schema?: { value: unknown; schema: unknown; what: string; scopeId: number; scope?: SchemaScope };
}

/** The schema scopes dm sent, by id (each is sent once, with its first schema request). */
const scopes = new Map<number, SchemaScope>();

installBlueprintJinja();

function validate(
  { validateAgainst }: typeof import('./schema-validation.js'),
  id: number,
  check: NonNullable<Request['schema']>,
): void {
  if (check.scope) scopes.set(check.scopeId, check.scope);
  const scope = scopes.get(check.scopeId);
  if (!scope) throw new Error(`schema scope ${check.scopeId} was never sent`);
  process.send?.({ id, ok: true, problems: validateAgainst(check.value, check.schema, scope, check.what) });
}

function handle(request: Request): void {
  resetRenderState();
  try {
    if (request.schema) {
      const module = schemaValidation.module;
      if (!module) throw new Error(`cannot validate against a schema: ${schemaValidation.failure}`);
      validate(module, request.id, request.schema);
      return;
    }
    const context = {
      ...request.context,
      getResource,
      getResourceKey: makeGetResourceKey(request.context.cd),
    };
    const text = renderJinja(request.source, context, { name: request.name, files: request.files });
    process.send?.(
      request.capture
        ? { id: request.id, ok: true, data: captured ?? null }
        : { id: request.id, ok: true, text },
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof BlueprintError) {
      // A schema or reference that cannot be used: dm raises it again as it is.
      process.send?.({ id: request.id, ok: false, kind: 'blueprint', phase: error.phase, message });
      return;
    }
    const kind =
      error instanceof JinjaRenderError ? error.kind : error instanceof RangeError ? 'limit' : 'runtime';
    const line = error instanceof JinjaRenderError ? (error.lineno ?? null) : null;
    process.send?.({
      id: request.id,
      ok: false,
      kind,
      message,
      line,
      templateFunction: templateFunctionFailed,
    });
  }
}

process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
schemaValidation = new LoadAfterReady(
  () => import('./schema-validation.js'),
  (request) => request.schema !== undefined,
  handle,
);
process.on('message', (raw: unknown) => schemaValidation.take(raw as Request));
