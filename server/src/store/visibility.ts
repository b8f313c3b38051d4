/**
 * Who may read which registry (docs/server.md, "Organisations and visibility"): the one rule, kept
 * here in its two forms side by side — a function over a registry's row for what is answered from
 * memory (resolve, a registry by id or name, template pages and files) and a SQL condition for
 * what a query answers (search), so totals, facets and suggestions are computed after the filter.
 * A registry the caller may not read is not found (404), never forbidden.
 *
 * A caller reads a registry when it is public, or the caller reads every registry (an admin or
 * `*` read token), or its token names the registry, or the registry belongs to one of the token's
 * organisations. Anything but `visibility = 'public'` counts as private.
 */
import { DmError, type ErrorCategory } from '../../../client/src/error.js';
import type { Reader } from './contract.js';

/** A caller without a token: public registries only. */
export const PUBLIC_READER: Reader = Object.freeze({ all: false, ids: [], organisations: [] });

/** Admins and `*` read tokens: every registry. */
export const EVERY_REGISTRY: Reader = Object.freeze({ all: true, ids: [], organisations: [] });

/** The fields of a registry the rule looks at. */
export interface VisibilityFields {
  id: number;
  visibility: string;
  organisation: string | null;
}

/** Whether `reader` may read the registry (the rule of this module, from memory). */
export function mayRead(reader: Reader, registry: VisibilityFields): boolean {
  return (
    registry.visibility === 'public' ||
    reader.all ||
    reader.ids.includes(registry.id) ||
    (registry.organisation !== null && reader.organisations.includes(registry.organisation))
  );
}

/**
 * The same rule as a condition on a registry id column, for SQLite (`?` parameters, in order), or
 * undefined when the reader reads everything (no condition at all).
 */
export function visibleRegistriesSqlite(
  column: string,
  reader: Reader,
): { sql: string; params: unknown[] } | undefined {
  if (reader.all) return undefined;
  const list = (n: number) => Array.from({ length: n }, () => '?').join(',');
  let sql = `${column} IN (SELECT id FROM registries WHERE visibility = 'public'`;
  if (reader.ids.length) sql += ` OR id IN (${list(reader.ids.length)})`;
  if (reader.organisations.length) sql += ` OR organisation IN (${list(reader.organisations.length)})`;
  return { sql: `${sql})`, params: [...reader.ids, ...reader.organisations] };
}

/**
 * The same rule for PostgreSQL: a condition on a registry id column whose parameters are appended
 * to `values` (numbered from its length), or undefined when the reader reads everything.
 */
export function visibleRegistriesPg(column: string, reader: Reader, values: unknown[]): string | undefined {
  if (reader.all) return undefined;
  values.push([...reader.ids], [...reader.organisations]);
  const ids = values.length - 1;
  const organisations = values.length;
  return `${column} IN (SELECT id FROM registries WHERE visibility = 'public' OR id = ANY($${ids}::int[]) OR organisation = ANY($${organisations}::text[]))`;
}

/** At most this many organisations on one token. */
export const MAX_ORGANISATIONS = 100;

const ORGANISATION_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * An organisation's name as stored: lower-cased; letters, digits and inner `-`, at most 63
 * characters. `where` names the input in the error (`--org`, `organisation`); a flag's error is a
 * usage error (exit 2), a body's invalid input (both 400 over HTTP).
 */
export function parseOrganisation(
  text: unknown,
  where: string,
  category: ErrorCategory = 'invalid-input',
): string {
  const name = typeof text === 'string' ? text.trim().toLowerCase() : '';
  if (!ORGANISATION_RE.test(name)) {
    throw new DmError(
      'INVALID_ORGANISATION',
      `${where}: '${String(text).slice(0, 80)}' is not an organisation name (letters, digits and inner '-', at most 63 characters)`,
      { category },
    );
  }
  return name;
}

/** `a,b` → `['a', 'b']`, as organisationList. */
export function parseOrganisationList(
  text: string,
  where: string,
  category: ErrorCategory = 'invalid-input',
): string[] {
  return organisationList(text.split(','), where, category);
}

/** Organisation names each checked by parseOrganisation, duplicates dropped, sorted; at most MAX_ORGANISATIONS. */
export function organisationList(
  list: readonly unknown[],
  where: string,
  category: ErrorCategory = 'invalid-input',
): string[] {
  const names = [...new Set(list.map((part) => parseOrganisation(part, where, category)))].sort();
  if (names.length > MAX_ORGANISATIONS) {
    throw new DmError('INVALID_ORGANISATION', `${where}: at most ${MAX_ORGANISATIONS} organisations`, {
      category,
    });
  }
  return names;
}

/** A token's organisations as the `tokens.organisations` column holds them (null: none). */
export function storedOrganisations(names: readonly string[]): string | null {
  return names.length ? names.join(',') : null;
}

/** The `tokens.organisations` column back as a list. */
export function organisationsOf(stored: string | null): string[] {
  return stored ? stored.split(',') : [];
}
