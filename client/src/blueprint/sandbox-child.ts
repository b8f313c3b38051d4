/**
 * Entry of the blueprint rendering process (sandbox.ts): started with Node's permission model
 * like the expansion engine's Jinja process, it renders one execution at a time with the
 * blueprint functions of jinja-functions.ts and answers over the IPC channel.
 */
import { JinjaRenderError, renderJinja } from '../expand/jinja/compat.js';
import {
  captured,
  getResource,
  installBlueprintJinja,
  makeGetResourceKey,
  resetRenderState,
  templateFunctionFailed,
} from './jinja-functions.js';

interface Request {
  id: number;
  name: string;
  source: string;
  context: Record<string, unknown>;
  files: Record<string, string>;
  /** Answer with the value the `__dm_capture` filter saw instead of the text. */
  capture?: boolean;
}

installBlueprintJinja();

process.on('message', (raw: unknown) => {
  const request = raw as Request;
  resetRenderState();
  try {
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
});

process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
