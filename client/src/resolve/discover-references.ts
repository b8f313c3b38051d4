/**
 * Static discovery of the references a configuration needs (docs/client.md): import paths,
 * resource types and schema imports that are registry references, and — transitively — full
 * references written in the text of the templates and schemas they resolve to. The expansion
 * engine finds the references templates emit at render time; this finds what can be seen without
 * rendering, which is what `dm install` locks.
 */
import { isMapping } from '../data.js';
import { DmError } from '../error.js';
import { missingVWarning } from '../input.js';
import {
  DEFAULT_HOST,
  type DefaultRegistry,
  formatReference,
  parseReference,
  tryParseReference,
} from '../reference/reference.js';

const FULL_REFERENCE =
  /(?<![A-Za-z0-9./-])[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d{1,5})?\/[A-Za-z0-9-]+\/[A-Za-z0-9._-]+\/(?:[A-Za-z0-9][A-Za-z0-9._-]*\/)?[A-Za-z0-9][A-Za-z0-9._-]*:=?v\d[0-9A-Za-z.+-]*/g;

function asReference(value: unknown, defaultRegistry: DefaultRegistry | undefined): string | undefined {
  if (typeof value !== 'string' || !value.includes(':') || /^https?:/i.test(value)) return undefined;
  try {
    const ref = parseReference(value, { defaultRegistry });
    return ref.kind === 'registry' ? formatReference(ref) : undefined;
  } catch (error) {
    // A short reference with no default registry is a mistake to report, not a non-reference.
    if (error instanceof DmError && error.code === 'MISSING_DEFAULT_REGISTRY') throw error;
    return undefined;
  }
}

/** References in a parsed configuration or schema: `imports[].path`, `resources[].type`, recursively in `resources`. */
export function referencesInDocument(
  doc: unknown,
  defaultRegistry: DefaultRegistry | undefined,
  /** Told about types that are references but for the `v` of their version (input.ts). */
  onWarning?: (message: string) => void,
): string[] {
  const found = new Set<string>();
  const visitResources = (resources: unknown) => {
    if (!Array.isArray(resources)) return;
    for (const r of resources) {
      if (!r || typeof r !== 'object') continue;
      const { type, name } = r as Record<string, unknown>;
      const ref = asReference(type, defaultRegistry);
      if (ref) found.add(ref);
      else if (onWarning && typeof type === 'string') {
        const said = missingVWarning(type, name);
        if (said) onWarning(said);
      }
      visitResources((r as Record<string, unknown>).resources);
    }
  };
  if (isMapping(doc)) {
    const d = doc;
    if (Array.isArray(d.imports)) {
      for (const imp of d.imports) {
        const path = imp && typeof imp === 'object' ? (imp as Record<string, unknown>).path : imp;
        const ref = asReference(path, defaultRegistry);
        if (ref) found.add(ref);
      }
    }
    visitResources(d.resources);
  }
  return [...found].sort();
}

/** Full references (with a host) written anywhere in a template's or schema's text. */
export function referencesInText(text: string, hosts: readonly string[] = [DEFAULT_HOST]): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(FULL_REFERENCE)) {
    const ref = tryParseReference(match[0]);
    if (ref && ref.kind === 'registry' && (hosts.includes(ref.host) || ref.host === DEFAULT_HOST)) {
      found.add(formatReference(ref));
    }
  }
  return [...found].sort();
}

/** Plain URL references (https://…/x.jinja) used as import paths or resource types. */
export function urlsInDocument(doc: unknown): string[] {
  const found = new Set<string>();
  const consider = (value: unknown) => {
    if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return;
    const ref = tryParseReference(value);
    if (ref?.kind === 'url') found.add(ref.url);
  };
  const visitResources = (resources: unknown) => {
    if (!Array.isArray(resources)) return;
    for (const r of resources) {
      if (!r || typeof r !== 'object') continue;
      consider((r as Record<string, unknown>).type);
      visitResources((r as Record<string, unknown>).resources);
    }
  };
  if (isMapping(doc)) {
    const d = doc;
    if (Array.isArray(d.imports)) {
      for (const imp of d.imports)
        consider(imp && typeof imp === 'object' ? (imp as Record<string, unknown>).path : imp);
    }
    visitResources(d.resources);
  }
  return [...found].sort();
}
