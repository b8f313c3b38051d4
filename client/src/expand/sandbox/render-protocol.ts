/**
 * The messages between the expansion sandbox (render-sandbox.ts) and its rendering processes
 * (jinja-child.ts; the Python runner, runner-source.ts, answers in the same shape), declared once
 * for both sides (docs/expansion.md). Requests go as arrays over the IPC channel; each answer names
 * the request's `id`.
 */
import type { DmError, ErrorCode } from '../../error.js';
import type { SchemaValidationMode } from '../types.js';

/** One rendering (or schema check) asked of the Jinja process. */
export interface JinjaRequest {
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
  /** The schema (its path in the schema's own file set) to check `context.properties` against. */
  schema?: string;
  schemaFiles?: Record<string, string>;
  schemaFilesId?: number;
  /** Check the properties first (`only`: and answer with them, nothing to render). */
  check?: { subject: string; mode: SchemaValidationMode; ownFile?: boolean; only?: boolean };
  /** Answer with the CPU time of the work (`ms`). */
  time?: boolean;
}

/** A request that failed, and why (`kind`), as the process reports it. */
export interface RenderFailure {
  ok: false;
  kind: 'error' | 'compile' | 'runtime' | 'blocked' | 'limit' | 'yaml' | 'limit-data' | 'dm-error';
  message: string;
  file?: string | null;
  line?: number | null;
  /** kind 'dm-error': a DmError raised in the rendering process, as it was. */
  error?: {
    code: ErrorCode;
    category: DmError['category'];
    details?: Record<string, unknown>;
    hint?: string;
  };
}

export type RenderAnswer = (
  | {
      ok: true;
      text?: string;
      data?: unknown;
      wire?: boolean;
      ms?: number[];
      /** With a schema check: the properties checked (`propertiesWire`: in the wire form). */
      properties?: unknown;
      propertiesWire?: boolean;
      violations?: string[];
    }
  | RenderFailure
) & {
  id: number;
};

/** A rendering process's first message: it is ready for requests. */
export interface RenderReady {
  ready: true;
  /** Started from a startup snapshot: the digest of the renderer's bundle it was built from. */
  snapshot?: string;
  /** Started warm: the number of the warm-up's requests it served (renderer-warm-up.ts). */
  warmUp?: number;
}

/**
 * The argument that starts a Jinja rendering process warm: it serves a warm-up of its own before it
 * says it is ready (renderer-warm-up.ts; render-sandbox.ts, startRenderersEarly).
 */
export const RENDERER_WARM_ARG = 'warm-up';
