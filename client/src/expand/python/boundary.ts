/**
 * The Node side of the Python process's operating-system boundary (docs/expansion.md,
 * "Isolation"; the Python side is boundary-source.ts): the uid the process starts as, what its
 * ready line says it entered, and the one decision about a registry's template where namespaces
 * were refused.
 */
import type { SpawnOptions } from 'node:child_process';
import { DmError } from '../../error.js';

/** What a registry's Python template needs: namespaces, or what the machine allows (opt-in). */
export type PythonIsolation = 'namespaces' | 'best-effort';

/** The layers the process entered (`namespaces`, `landlock`) and why namespaces were not. */
export interface PythonBoundary {
  layers: string[];
  refused: string | null;
}

/** The uid and gid of `nobody`, which the Python process runs as when dm runs as root. */
const NOBODY = 65534;

/** Spawn options that start the process unprivileged when dm runs as root. */
export function unprivileged(): Pick<SpawnOptions, 'uid' | 'gid'> {
  return process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {};
}

/** `DM_PYTHON_ISOLATION`: `best-effort` is the operator's opt-in; anything else is the default. */
export function pythonIsolationFromEnv(env: NodeJS.ProcessEnv = process.env): PythonIsolation {
  const value = env.DM_PYTHON_ISOLATION;
  if (value === undefined || value === '' || value === 'namespaces') return 'namespaces';
  if (value === 'best-effort') return 'best-effort';
  throw new DmError(
    'INVALID_ARGUMENT',
    `DM_PYTHON_ISOLATION is '${value}': it must be 'namespaces' or 'best-effort'`,
    { category: 'usage' },
  );
}

/** The boundary a ready line reports. */
export function boundaryOf(message: unknown): PythonBoundary {
  const m = message as { boundary?: unknown; refused?: unknown };
  return {
    layers: Array.isArray(m.boundary) ? m.boundary.filter((l): l is string => typeof l === 'string') : [],
    refused: typeof m.refused === 'string' ? m.refused : null,
  };
}

/** The refusal of a registry's template where the process has no namespaces. */
export function isolationRefused(name: string, boundary: PythonBoundary): DmError {
  const has = boundary.layers.length ? boundary.layers.join(' and ') : 'no operating-system layer';
  return new DmError(
    'PYTHON_ISOLATION_UNAVAILABLE',
    `${name}: blocked: a Python template from a registry runs only inside namespaces, and this machine refused them (${boundary.refused ?? 'unknown reason'}; it has ${has})`,
    {
      category: 'blocked',
      details: { template: name, layers: boundary.layers, refused: boundary.refused },
      hint: 'allow user namespaces (containers: see docs/expansion.md, "Isolation"), or set DM_PYTHON_ISOLATION=best-effort to run it with Landlock and the in-process guard only',
    },
  );
}
