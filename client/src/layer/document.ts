/**
 * A raw Deckhand document and the properties the renderer derives from it, exactly as
 * docs/layering.md "How rendering works" reads them. Input is untrusted: a field of the wrong type is
 * InvalidDocumentFormat here instead of a crash later (§15, last paragraph).
 */
import { getOwn, isMapping, type Mapping } from './data.js';
import { layeringError } from './errors.js';

export interface LayeredDocument {
  /** Position in the input. */
  index: number;
  /** Where the document came from (file and position), for messages. */
  source: string | undefined;
  raw: Mapping;
  schema: string;
  name: string;
  /** '' when absent; always '' for control documents (quirk Q12: dm ignores their layeringDefinition). */
  layer: string;
  abstract: boolean;
  control: boolean;
  replacement: boolean;
  labels: Mapping;
  selector: Mapping;
  actions: unknown[];
  substitutions: unknown[];
  /** `data` as given; null when absent. */
  data: unknown;
  /** `schema NUL layer NUL name`: the raw identity, and the sort key for order-independent processing. */
  rawKey: string;
}

/** `schema 'name' (layer L)`, plus the source when known: how messages name a document. */
export function describeDocument(doc: {
  schema: string;
  name: string;
  layer: string;
  source?: string | undefined;
}): string {
  const layer = doc.layer === '' ? '' : ` in layer '${doc.layer}'`;
  const where = doc.source ? ` (${doc.source})` : '';
  return `document ${doc.schema || '(no schema)'} '${doc.name}'${layer}${where}`;
}

/** Machine-readable identity of a document for error details. */
export function documentDetails(doc: LayeredDocument): Record<string, unknown> {
  return {
    schema: doc.schema,
    name: doc.name,
    layer: doc.layer,
    ...(doc.source === undefined ? {} : { source: doc.source }),
  };
}

function where(index: number, source: string | undefined): string {
  return source ?? `document #${index + 1}`;
}

function optionalString(value: unknown, field: string, index: number, source: string | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') {
    throw layeringError('InvalidDocumentFormat', `${where(index, source)}: ${field} must be a string`, {
      index,
      field,
      ...(source === undefined ? {} : { source }),
    });
  }
  return value;
}

function optionalMapping(value: unknown, field: string, index: number, source: string | undefined): Mapping {
  if (value === undefined || value === null) return {};
  if (!isMapping(value)) {
    throw layeringError('InvalidDocumentFormat', `${where(index, source)}: ${field} must be a mapping`, {
      index,
      field,
      ...(source === undefined ? {} : { source }),
    });
  }
  return value;
}

function optionalList(value: unknown, field: string, index: number, source: string | undefined): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw layeringError('InvalidDocumentFormat', `${where(index, source)}: ${field} must be a list`, {
      index,
      field,
      ...(source === undefined ? {} : { source }),
    });
  }
  return value;
}

export function readDocument(value: unknown, index: number, source: string | undefined): LayeredDocument {
  if (!isMapping(value)) {
    throw layeringError(
      'InvalidDocumentFormat',
      `${where(index, source)} is not a mapping with schema, metadata and data`,
      { index, ...(source === undefined ? {} : { source }) },
    );
  }
  const schema = optionalString(getOwn(value, 'schema'), 'schema', index, source);
  const metadata = optionalMapping(getOwn(value, 'metadata'), 'metadata', index, source);
  const name = optionalString(getOwn(metadata, 'name'), 'metadata.name', index, source);
  const metaSchema = getOwn(metadata, 'schema');
  const control = typeof metaSchema === 'string' && metaSchema.startsWith('metadata/Control');
  const data = Object.hasOwn(value, 'data') ? (value.data ?? null) : null;
  const labels = optionalMapping(getOwn(metadata, 'labels'), 'metadata.labels', index, source);
  if (control) {
    // Quirk Q12: control documents are never layered; dm ignores a layeringDefinition on them.
    return makeDocument(index, source, value, schema, name, '', false, true, false, labels, {}, [], [], data);
  }
  const ld = optionalMapping(
    getOwn(metadata, 'layeringDefinition'),
    'metadata.layeringDefinition',
    index,
    source,
  );
  return makeDocument(
    index,
    source,
    value,
    schema,
    name,
    optionalString(getOwn(ld, 'layer'), 'metadata.layeringDefinition.layer', index, source),
    getOwn(ld, 'abstract') === true,
    false,
    getOwn(metadata, 'replacement') === true,
    labels,
    optionalMapping(
      getOwn(ld, 'parentSelector'),
      'metadata.layeringDefinition.parentSelector',
      index,
      source,
    ),
    optionalList(getOwn(ld, 'actions'), 'metadata.layeringDefinition.actions', index, source),
    optionalList(getOwn(metadata, 'substitutions'), 'metadata.substitutions', index, source),
    data,
  );
}

/** One object shape for every document (property access stays monomorphic on large sets). */
function makeDocument(
  index: number,
  source: string | undefined,
  raw: Mapping,
  schema: string,
  name: string,
  layer: string,
  abstract: boolean,
  control: boolean,
  replacement: boolean,
  labels: Mapping,
  selector: Mapping,
  actions: unknown[],
  substitutions: unknown[],
  data: unknown,
): LayeredDocument {
  return {
    index,
    source,
    raw,
    schema,
    name,
    layer,
    abstract,
    control,
    replacement,
    labels,
    selector,
    actions,
    substitutions,
    data,
    rawKey: `${schema}\u0000${layer}\u0000${name}`,
  };
}
