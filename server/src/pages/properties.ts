/**
 * A template schema's properties as table rows (docs/pages.md): nested object properties get
 * dotted names (`persistence.size`), properties of array items `name[].sub`. Pure, so the page and
 * its tests share it.
 */
import { isMapping } from '../../../client/src/data.js';

export interface PropertyRow {
  name: string;
  type: string;
  /** The default as YAML-ish flow text, or null when there is none. */
  default: string | null;
  required: boolean;
  description: string;
}

const MAX_DEPTH = 8;
const MAX_ROWS = 500;

/** A default value as short text: strings bare, everything else as JSON. */
export function formatDefault(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : value;
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text;
}

function typeOf(schema: Record<string, unknown>): string {
  const type = schema.type;
  let text = Array.isArray(type)
    ? type.map(String).join(' | ')
    : typeof type === 'string'
      ? type
      : schema.$ref !== undefined
        ? `$ref ${String(schema.$ref)}`
        : '';
  if (text === 'array' && isMapping(schema.items) && typeof schema.items.type === 'string') {
    text = `array of ${schema.items.type}`;
  }
  if (Array.isArray(schema.enum)) {
    text = `${text ? `${text}: ` : ''}one of ${schema.enum.map(formatDefault).join(', ')}`;
  }
  return text;
}

/** Rows for every property of a (parsed) schema, depth first in the schema's own order. */
export function propertyRows(schema: unknown): PropertyRow[] {
  const rows: PropertyRow[] = [];
  const walk = (node: Record<string, unknown>, prefix: string, depth: number) => {
    const properties = node.properties;
    if (!isMapping(properties) || depth > MAX_DEPTH) return;
    const required = new Set(Array.isArray(node.required) ? node.required.map(String) : []);
    for (const [key, value] of Object.entries(properties)) {
      if (rows.length >= MAX_ROWS) return;
      const child = isMapping(value) ? value : {};
      const name = `${prefix}${key}`;
      rows.push({
        name,
        type: typeOf(child),
        default: 'default' in child ? formatDefault(child.default) : null,
        required: required.has(key),
        description: typeof child.description === 'string' ? child.description : '',
      });
      walk(child, `${name}.`, depth + 1);
      if (isMapping(child.items)) walk(child.items, `${name}[].`, depth + 1);
    }
  };
  if (isMapping(schema)) walk(schema, '', 0);
  return rows;
}
