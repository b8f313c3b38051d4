/**
 * Optional pre-validation, docs/layering.md "Pre-validation": Deckhand's base schema, the `metadata/Document/v1`
 * and `metadata/Control/v1` schemas, the LayeringPolicy's data, and duplicate raw keys. Every
 * failure is InvalidDocumentFormat naming the document and the offending field.
 */
import { getOwn, isMapping, type Mapping } from './data.js';
import { layeringError } from './errors.js';

const SCHEMA_PATTERN = /^[A-Za-z]+\/[A-Za-z]+\/v\d+$/;
const METADATA_SCHEMA = /^metadata\/(Document|Control)\/v\d+$/;

class Checker {
  constructor(
    private readonly where: string,
    private readonly identity: Record<string, unknown>,
  ) {}

  fail(field: string, problem: string): never {
    throw layeringError('InvalidDocumentFormat', `${this.where}: ${field} ${problem}`, {
      ...this.identity,
      field,
    });
  }

  mapping(value: unknown, field: string): Mapping {
    if (!isMapping(value)) this.fail(field, 'must be a mapping');
    return value as Mapping;
  }

  onlyKeys(obj: Mapping, allowed: readonly string[], field: string): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key))
        this.fail(`${field}.${key}`, `is not allowed (allowed: ${allowed.join(', ')})`);
    }
  }

  required(obj: Mapping, keys: readonly string[], field: string): void {
    for (const key of keys) if (!Object.hasOwn(obj, key)) this.fail(`${field}.${key}`, 'is required');
  }

  string(value: unknown, field: string): void {
    if (typeof value !== 'string') this.fail(field, 'must be a string');
  }
}

function checkDocumentMetadata(c: Checker, meta: Mapping): void {
  c.onlyKeys(
    meta,
    ['schema', 'name', 'labels', 'storagePolicy', 'replacement', 'layeringDefinition', 'substitutions'],
    'metadata',
  );
  c.required(meta, ['schema', 'name', 'storagePolicy', 'layeringDefinition'], 'metadata');
  if (Object.hasOwn(meta, 'labels')) c.mapping(meta.labels, 'metadata.labels');
  const policy = getOwn(meta, 'storagePolicy');
  if (policy !== 'cleartext' && policy !== 'encrypted') {
    c.fail('metadata.storagePolicy', 'must be cleartext or encrypted');
  }
  if (Object.hasOwn(meta, 'replacement') && typeof meta.replacement !== 'boolean') {
    c.fail('metadata.replacement', 'must be a boolean');
  }
  const ld = c.mapping(getOwn(meta, 'layeringDefinition'), 'metadata.layeringDefinition');
  c.onlyKeys(ld, ['layer', 'abstract', 'parentSelector', 'actions'], 'metadata.layeringDefinition');
  c.required(ld, ['layer'], 'metadata.layeringDefinition');
  c.string(ld.layer, 'metadata.layeringDefinition.layer');
  if (Object.hasOwn(ld, 'abstract') && typeof ld.abstract !== 'boolean') {
    c.fail('metadata.layeringDefinition.abstract', 'must be a boolean');
  }
  const hasSelector = Object.hasOwn(ld, 'parentSelector');
  const hasActions = Object.hasOwn(ld, 'actions');
  if (hasSelector !== hasActions) {
    c.fail('metadata.layeringDefinition', 'must have both parentSelector and actions, or neither');
  }
  if (hasSelector) {
    const selector = c.mapping(ld.parentSelector, 'metadata.layeringDefinition.parentSelector');
    if (Object.keys(selector).length === 0) {
      c.fail('metadata.layeringDefinition.parentSelector', 'must have at least one label');
    }
  }
  if (hasActions) {
    const actions = ld.actions;
    if (!Array.isArray(actions) || actions.length === 0) {
      c.fail('metadata.layeringDefinition.actions', 'must be a non-empty list');
    }
    (actions as unknown[]).forEach((a, i) => {
      const field = `metadata.layeringDefinition.actions[${i}]`;
      const action = c.mapping(a, field);
      c.onlyKeys(action, ['method', 'path'], field);
      c.required(action, ['method', 'path'], field);
      if (!['merge', 'replace', 'delete'].includes(action.method as string)) {
        c.fail(`${field}.method`, 'must be merge, replace or delete');
      }
      c.string(action.path, `${field}.path`);
    });
  }
  if (Object.hasOwn(meta, 'substitutions')) {
    const subs = meta.substitutions;
    if (!Array.isArray(subs)) c.fail('metadata.substitutions', 'must be a list');
    (subs as unknown[]).forEach((s, i) => {
      checkSubstitution(c, s, `metadata.substitutions[${i}]`);
    });
  }
}

function checkSubstitution(c: Checker, value: unknown, field: string): void {
  const sub = c.mapping(value, field);
  c.onlyKeys(sub, ['src', 'dest'], field);
  c.required(sub, ['src', 'dest'], field);
  const src = c.mapping(sub.src, `${field}.src`);
  c.onlyKeys(src, ['schema', 'name', 'path', 'pattern', 'match_group', 'deepcopy'], `${field}.src`);
  c.required(src, ['schema', 'name', 'path'], `${field}.src`);
  for (const key of ['schema', 'name', 'path', 'pattern'] as const) {
    if (Object.hasOwn(src, key)) c.string(src[key], `${field}.src.${key}`);
  }
  if (Object.hasOwn(src, 'match_group') && !Number.isInteger(src.match_group)) {
    c.fail(`${field}.src.match_group`, 'must be an integer');
  }
  if (Object.hasOwn(src, 'deepcopy') && typeof src.deepcopy !== 'boolean') {
    c.fail(`${field}.src.deepcopy`, 'must be a boolean');
  }
  const dests = Array.isArray(sub.dest) ? sub.dest : [sub.dest];
  if (dests.length === 0) c.fail(`${field}.dest`, 'must not be an empty list');
  dests.forEach((d, i) => {
    const df = Array.isArray(sub.dest) ? `${field}.dest[${i}]` : `${field}.dest`;
    const dest = c.mapping(d, df);
    c.onlyKeys(dest, ['path', 'pattern', 'recurse'], df);
    c.required(dest, ['path'], df);
    c.string(dest.path, `${df}.path`);
    if (Object.hasOwn(dest, 'pattern')) c.string(dest.pattern, `${df}.pattern`);
    if (Object.hasOwn(dest, 'recurse')) {
      const recurse = c.mapping(dest.recurse, `${df}.recurse`);
      c.required(recurse, ['depth'], `${df}.recurse`);
      const depth = recurse.depth;
      if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < -1) {
        c.fail(`${df}.recurse.depth`, 'must be an integer >= -1');
      }
    }
  });
}

function checkControlMetadata(c: Checker, meta: Mapping, schema: string, data: unknown): void {
  c.required(meta, ['schema', 'name'], 'metadata');
  if (Object.hasOwn(meta, 'labels')) {
    const labels = c.mapping(meta.labels, 'metadata.labels');
    for (const [k, v] of Object.entries(labels)) {
      if (typeof v !== 'string') c.fail(`metadata.labels.${k}`, 'must be a string');
    }
  }
  if (schema.startsWith('deckhand/LayeringPolicy')) {
    const d = c.mapping(data, 'data');
    c.onlyKeys(d, ['layerOrder'], 'data');
    c.required(d, ['layerOrder'], 'data');
    if (!Array.isArray(d.layerOrder)) c.fail('data.layerOrder', 'must be a list of layer names');
    (d.layerOrder as unknown[]).forEach((l, i) => {
      c.string(l, `data.layerOrder[${i}]`);
    });
  }
}

/** Throws InvalidDocumentFormat for the first document (in input order) that Deckhand would reject. */
export function prevalidateDocuments(
  documents: readonly unknown[],
  sources?: readonly (string | undefined)[],
): void {
  const seen = new Set<string>();
  documents.forEach((doc, index) => {
    const source = sources?.[index];
    const where = source ?? `document #${index + 1}`;
    const identity = { index, ...(source === undefined ? {} : { source }) };
    const c = new Checker(where, identity);
    const d = c.mapping(doc, 'document');
    c.onlyKeys(d, ['schema', 'metadata', 'data'], 'document');
    c.required(d, ['schema', 'metadata', 'data'], 'document');
    c.string(d.schema, 'schema');
    const schema = d.schema as string;
    if (!SCHEMA_PATTERN.test(schema)) c.fail('schema', `'${schema}' does not match namespace/Kind/vN`);
    const meta = c.mapping(d.metadata, 'metadata');
    c.string(meta.name, 'metadata.name');
    c.string(meta.schema, 'metadata.schema');
    const metaSchema = meta.schema as string;
    if (!METADATA_SCHEMA.test(metaSchema)) {
      c.fail('metadata.schema', `'${metaSchema}' is neither metadata/Document/vN nor metadata/Control/vN`);
    }
    const named = new Checker(`${where} (${schema} '${String(meta.name)}')`, {
      ...identity,
      schema,
      name: meta.name,
    });
    if (metaSchema.startsWith('metadata/Control')) checkControlMetadata(named, meta, schema, d.data);
    else checkDocumentMetadata(named, meta);
    const ld = getOwn(meta, 'layeringDefinition');
    const layer = isMapping(ld) && typeof ld.layer === 'string' ? ld.layer : '';
    const key = `${schema}\u0000${layer}\u0000${String(meta.name)}`;
    if (seen.has(key)) {
      named.fail('metadata.name', `duplicates another document with the same schema, layer and name`);
    }
    seen.add(key);
  });
}
