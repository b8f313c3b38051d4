import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DmError, exitCodeFor } from '../error.js';
import type { Mapping } from './data.js';
import {
  type RenderedDocument,
  type RenderOptions,
  type RenderWarning,
  renderDocuments,
} from './render-documents.js';

const LAYERS = ['global', 'region', 'site'];

function policy(layerOrder: unknown = LAYERS): Mapping {
  return {
    schema: 'deckhand/LayeringPolicy/v1',
    metadata: { schema: 'metadata/Control/v1', name: 'layering-policy' },
    data: { layerOrder },
  };
}

interface DocOptions {
  schema?: string;
  labels?: Mapping;
  selector?: Mapping;
  actions?: { method: string; path: string }[];
  substitutions?: unknown[];
  abstract?: boolean;
  replacement?: boolean;
  storagePolicy?: string;
}

function doc(name: string, layer: string, data: unknown, o: DocOptions = {}): Mapping {
  const layeringDefinition: Mapping = { layer, abstract: o.abstract ?? false };
  if (o.selector) layeringDefinition.parentSelector = o.selector;
  if (o.actions) layeringDefinition.actions = o.actions;
  return {
    schema: o.schema ?? 'example/Kind/v1',
    metadata: {
      schema: 'metadata/Document/v1',
      name,
      storagePolicy: o.storagePolicy ?? 'cleartext',
      labels: o.labels ?? { name },
      layeringDefinition,
      ...(o.replacement === undefined ? {} : { replacement: o.replacement }),
      ...(o.substitutions ? { substitutions: o.substitutions } : {}),
    },
    data,
  };
}

function dataOf(out: RenderedDocument[], name: string, layer?: string): unknown {
  const found = out.find((d) => {
    const m = d.metadata as Mapping;
    return m.name === name && (layer === undefined || (m.layeringDefinition as Mapping).layer === layer);
  });
  assert.ok(found, `no rendered document ${name}`);
  return found.data;
}

function failure(documents: unknown[], options: RenderOptions = {}): DmError {
  try {
    renderDocuments(documents, options);
  } catch (error) {
    assert.ok(error instanceof DmError, String(error));
    return error;
  }
  assert.fail('rendering succeeded');
}

const merge = (path = '.') => [{ method: 'merge', path }];
const sub = (name: string, path: string, dest: unknown, schema = 'example/Kind/v1') => ({
  src: { schema, name, path },
  dest,
});

describe('renderDocuments()', () => {
  it('renderDocuments() layers a site onto the nearest matching parent and keeps metadata', () => {
    const out = renderDocuments([
      policy(),
      doc('g', 'global', { a: { x: 1, y: 2 }, c: 9 }, { labels: { app: 'a' } }),
      doc(
        'r',
        'region',
        { a: { x: 5 } },
        { labels: { app: 'a', tier: 'r' }, selector: { app: 'a' }, actions: merge() },
      ),
      doc('s', 'site', { a: { z: 3 } }, { selector: { app: 'a', tier: 'r' }, actions: merge('.a') }),
    ]);
    assert.deepEqual(dataOf(out, 's'), { a: { x: 5, y: 2, z: 3 }, c: 9 });
    const site = out.find((d) => (d.metadata as Mapping).name === 's') as RenderedDocument;
    assert.deepEqual((site.metadata as Mapping).layeringDefinition, {
      layer: 'site',
      abstract: false,
      parentSelector: { app: 'a', tier: 'r' },
      actions: merge('.a'),
    });
    assert.equal(out[0]?.schema, 'deckhand/LayeringPolicy/v1', 'control documents are output unchanged');
  });

  it('renderDocuments() names the document and the path in MissingDocumentKey', () => {
    const error = failure([
      policy(),
      doc('g', 'global', { a: 1 }, { labels: { app: 'a' } }),
      doc('s', 'site', { b: 1 }, { selector: { app: 'a' }, actions: [{ method: 'replace', path: '.c' }] }),
    ]);
    assert.equal(error.code, 'MissingDocumentKey');
    assert.match(error.message, /example\/Kind\/v1 's' in layer 'site'.*'\.c'/);
    assert.deepEqual(
      {
        schema: error.details?.schema,
        name: error.details?.name,
        layer: error.details?.layer,
        path: error.details?.path,
      },
      { schema: 'example/Kind/v1', name: 's', layer: 'site', path: '.c' },
    );
    assert.equal(exitCodeFor(error), 1);
  });

  it('renderDocuments() reports an unknown action method as UnsupportedActionMethod', () => {
    const error = failure([
      policy(),
      doc('g', 'global', { a: 1 }, { labels: { app: 'a' } }),
      doc('s', 'site', { a: 2 }, { selector: { app: 'a' }, actions: [{ method: 'append', path: '.a' }] }),
    ]);
    assert.equal(error.code, 'UnsupportedActionMethod');
  });

  it('renderDocuments() makes InvalidDocumentFormat a validation failure (exit 4)', () => {
    const bad = doc('g', 'global', {});
    (bad.metadata as Mapping).storagePolicy = 'plain';
    const error = failure([policy(), bad], { validate: true });
    assert.equal(error.code, 'InvalidDocumentFormat');
    assert.match(error.message, /metadata\.storagePolicy/);
    assert.equal(exitCodeFor(error), 4);
    assert.doesNotThrow(() => renderDocuments([policy(), bad]));
  });

  it('renderDocuments() reports the same error kind whatever the input order', () => {
    const documents = [
      policy(),
      doc('g', 'global', { a: 1 }, { labels: { app: 'a' } }),
      doc('g2', 'global', { a: 1 }, { labels: { app: 'a' } }),
      doc('s', 'site', { a: 1 }, { selector: { app: 'a' }, actions: merge() }),
      doc('t', 'site', { a: 1 }, { labels: { other: 'x' }, selector: { other: 'x' }, actions: merge() }),
      doc('u', 'region', { a: 1 }, { labels: { other: 'x' } }),
      doc('v', 'site', { a: 1 }, { labels: { other: 'x' } }),
    ];
    const codes = new Set<string>();
    const messages = new Set<string>();
    for (const order of [
      documents,
      [...documents].reverse(),
      [documents[3], ...documents.slice(4), ...documents.slice(0, 3)],
    ]) {
      const e = failure(order);
      codes.add(e.code);
      messages.add(e.message);
    }
    assert.deepEqual([...codes], ['IndeterminateDocumentParent']);
    assert.equal(messages.size, 1);
  });

  it('renderDocuments() lists the documents of a dependency cycle', () => {
    const error = failure([
      policy(),
      doc('a', 'global', { x: 1 }, { substitutions: [sub('b', '.x', { path: '.y' })] }),
      doc('b', 'global', { x: 1 }, { substitutions: [sub('a', '.x', { path: '.y' })] }),
    ]);
    assert.equal(error.code, 'SubstitutionDependencyCycle');
    assert.match(error.message, /'a'.*->.*'b'.*->.*'a'/);
  });

  it('renderDocuments() treats __proto__ and constructor keys as data and pollutes nothing', () => {
    const parentData = JSON.parse(
      '{"__proto__": {"polluted": 1}, "constructor": {"prototype": 2}, "keep": true}',
    );
    const childData = JSON.parse('{"__proto__": {"more": 3}}');
    const out = renderDocuments([
      policy(),
      doc('g', 'global', parentData, { labels: JSON.parse('{"__proto__": "x"}') }),
      doc('s', 'site', childData, { selector: JSON.parse('{"__proto__": "x"}'), actions: merge() }),
    ]);
    const data = dataOf(out, 's') as Mapping;
    assert.equal(Object.getPrototypeOf(data), Object.prototype);
    assert.deepEqual(Object.keys(data).sort(), ['__proto__', 'constructor', 'keep']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(data, '__proto__')?.value, { polluted: 1, more: 3 });
    assert.equal(({} as Mapping).polluted, undefined);
    assert.equal(({} as Mapping).more, undefined);
  });

  it('renderDocuments() copies: outputs share no objects with the input or with each other', () => {
    const source = doc('src', 'global', { tree: { leaf: 1 } });
    const a = doc('a', 'global', {}, { substitutions: [sub('src', '.tree', { path: '.t' })] });
    const b = doc('b', 'global', {}, { substitutions: [sub('src', '.tree', { path: '.t' })] });
    const out = renderDocuments([policy(), source, a, b]);
    ((dataOf(out, 'a') as Mapping).t as Mapping).leaf = 99;
    assert.deepEqual(dataOf(out, 'b'), { t: { leaf: 1 } });
    assert.deepEqual(dataOf(out, 'src'), { tree: { leaf: 1 } });
    assert.deepEqual(source.data, { tree: { leaf: 1 } });
  });

  it('renderDocuments() ends absurdly deep or cyclic data in InvalidDocumentFormat, not a crash', () => {
    let deep: Mapping = {};
    const root = deep;
    for (let i = 0; i < 5000; i++) {
      const next: Mapping = {};
      deep.n = next;
      deep = next;
    }
    const cyclic: Mapping = { a: 1 };
    cyclic.self = cyclic;
    for (const data of [root, cyclic]) {
      const error = failure([
        policy(),
        doc('g', 'global', data, { labels: { app: 'a' } }),
        doc('s', 'site', { a: 1 }, { selector: { app: 'a' }, actions: merge('.a') }),
      ]);
      assert.equal(error.code, 'InvalidDocumentFormat');
    }
  });

  it('renderDocuments() deletes at the path, not the first equal value (quirk Q1 not copied)', () => {
    const out = renderDocuments([
      policy(),
      doc('g', 'global', { a: 1, b: 1 }, { labels: { app: 'a' } }),
      doc('s', 'site', {}, { selector: { app: 'a' }, actions: [{ method: 'delete', path: '.b' }] }),
    ]);
    assert.deepEqual(dataOf(out, 's'), { a: 1 });
  });

  it('renderDocuments() rejects a replacement of a replacement even when the middle one is abstract (Q9)', () => {
    const error = failure([
      policy(),
      doc('x', 'global', { a: 1 }, { labels: { l: 'g' } }),
      doc(
        'x',
        'region',
        { a: 2 },
        { labels: { l: 'r' }, selector: { l: 'g' }, actions: merge(), replacement: true, abstract: true },
      ),
      doc('x', 'site', { a: 3 }, { selector: { l: 'r' }, actions: merge(), replacement: true }),
    ]);
    assert.equal(error.code, 'InvalidDocumentReplacement');
  });

  it('renderDocuments() rejects two replacements of one parent (Q9)', () => {
    const error = failure([
      policy(),
      doc('x', 'global', { a: 1 }, { labels: { l: 'g' } }),
      doc(
        'x',
        'region',
        { a: 2 },
        { labels: { l: 'r1' }, selector: { l: 'g' }, actions: merge(), replacement: true },
      ),
      doc(
        'x',
        'site',
        { a: 3 },
        { labels: { l: 's' }, selector: { l: 'g' }, actions: merge(), replacement: true },
      ),
    ]);
    assert.equal(error.code, 'InvalidDocumentReplacement');
    assert.match(error.message, /already replaces/);
  });

  it('renderDocuments() rejects duplicate documents but tolerates identical duplicate control documents', () => {
    assert.equal(
      failure([policy(), doc('g', 'global', {}), doc('g', 'global', {})]).code,
      'InvalidDocumentFormat',
    );
    const out = renderDocuments([policy(), policy(), doc('g', 'global', {})]);
    assert.equal(out.length, 2);
  });

  it('renderDocuments() ignores a layeringDefinition on control documents (Q12 not copied)', () => {
    const p = policy();
    (p.metadata as Mapping).layeringDefinition = { layer: 'nowhere' };
    assert.doesNotThrow(() => renderDocuments([p, doc('g', 'global', {})]));
  });

  it('renderDocuments() rejects a layer-less document whose parentSelector matches something', () => {
    const child = doc('s', 'site', {}, { selector: { app: 'a' }, actions: merge() });
    delete ((child.metadata as Mapping).layeringDefinition as Mapping).layer;
    const error = failure([policy(), doc('g', 'global', { a: 1 }, { labels: { app: 'a' } }), child]);
    assert.equal(error.code, 'InvalidDocumentFormat');
  });

  it('renderDocuments() merges an object at dest "." and refuses a falsy scalar there (Q5, Q6)', () => {
    const out = renderDocuments([
      policy(),
      doc('src', 'global', { obj: { b: 2 }, empty: '' }),
      doc('d', 'global', { a: 1 }, { substitutions: [sub('src', '.obj', { path: '.' })] }),
    ]);
    assert.deepEqual(dataOf(out, 'd'), { a: 1, b: 2 });
    const error = failure([
      policy(),
      doc('src', 'global', { obj: { b: 2 }, empty: '' }),
      doc('d', 'global', { a: 1 }, { substitutions: [sub('src', '.empty', { path: '.' })] }),
    ]);
    assert.equal(error.code, 'UnknownSubstitutionError');
  });

  it('renderDocuments() reports pattern problems as UnknownSubstitutionError', () => {
    const cases: unknown[][] = [
      [sub('src', '.n', { path: '.a', pattern: '(' })],
      [sub('src', '.n', { path: '.missing', pattern: 'X' })],
      [{ src: { schema: 'example/Kind/v1', name: 'src', path: '.n', pattern: 'x' }, dest: { path: '.a' } }],
      [sub('src', '.n', { path: 'a' })],
    ];
    for (const substitutions of cases) {
      const error = failure([
        policy(),
        doc('src', 'global', { n: 5 }),
        doc('d', 'global', { a: 'X' }, { substitutions }),
      ]);
      assert.equal(error.code, 'UnknownSubstitutionError', JSON.stringify(substitutions));
    }
  });

  it('renderDocuments() with lenient substitution skips what strict mode reports, with warnings', () => {
    const warnings: RenderWarning[] = [];
    const out = renderDocuments(
      [
        policy(),
        doc('src', 'global', { n: 5 }),
        doc(
          'd',
          'global',
          { a: 'X', keep: 1 },
          {
            substitutions: [
              sub('nowhere', '.n', { path: '.b' }),
              sub('src', '.missing', { path: '.c' }),
              sub('src', '.n', [
                { path: '.keep.deeper', pattern: 'X' },
                { path: '.a', pattern: 'X' },
              ]),
            ],
          },
        ),
      ],
      { lenientSubstitution: true, onWarning: (w) => warnings.push(w) },
    );
    assert.deepEqual(dataOf(out, 'd'), { a: '5', keep: 1, c: null });
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['SubstitutionSourceNotFound', 'SubstitutionSourceDataNotFound', 'UnknownSubstitutionError'],
    );
  });

  it('renderDocuments() looks up encrypted sources in encryptionSources (EncryptionSourceNotFound otherwise)', () => {
    const documents = [
      policy(),
      doc('secret', 'global', 'ref-1', { schema: 'deckhand/Passphrase/v1', storagePolicy: 'encrypted' }),
      doc(
        'd',
        'global',
        {},
        { substitutions: [sub('secret', '.', { path: '.p' }, 'deckhand/Passphrase/v1')] },
      ),
    ];
    assert.deepEqual(dataOf(renderDocuments(documents, { encryptionSources: { 'ref-1': 'hunter2' } }), 'd'), {
      p: 'hunter2',
    });
    assert.deepEqual(dataOf(renderDocuments(documents), 'd'), { p: 'ref-1' });
    assert.equal(failure(documents, { encryptionSources: {} }).code, 'EncryptionSourceNotFound');
  });

  it('renderDocuments() reports a missing or malformed LayeringPolicy', () => {
    assert.equal(failure([doc('g', 'global', {})]).code, 'LayeringPolicyNotFound');
    assert.equal(failure([policy('global'), doc('g', 'global', {})]).code, 'InvalidDocumentFormat');
    assert.equal(failure([policy([]), doc('g', 'global', {})]).code, 'InvalidDocumentLayer');
  });

  it('renderDocuments() names where a malformed document came from', () => {
    const error = failure([policy(), 'not a document'], {
      sources: ['a.yaml, document 1', 'a.yaml, document 2'],
    });
    assert.equal(error.code, 'InvalidDocumentFormat');
    assert.match(error.message, /a\.yaml, document 2/);
  });

  it('renderDocuments() compares label values as Python does (1 == true, "1" != 1)', () => {
    const render = (label: unknown, selector: unknown) =>
      dataOf(
        renderDocuments([
          policy(),
          doc('g', 'global', { from: 'parent' }, { labels: { n: label } }),
          doc('s', 'site', { own: true }, { selector: { n: selector }, actions: merge() }),
        ]),
        's',
      );
    assert.deepEqual(render(true, 1), { from: 'parent', own: true });
    assert.deepEqual(render('1', 1), { own: true });
    assert.deepEqual(render({ a: [1] }, { a: [1] }), { from: 'parent', own: true });
  });

  it('renderDocuments() picks parents by the rarest selector label when 20,000 documents share one label', () => {
    const documents: Mapping[] = [policy()];
    for (let i = 0; i < 5000; i++) {
      documents.push(doc(`g${i}`, 'global', { v: i }, { labels: { all: 'yes', id: `g${i}` } }));
      documents.push(
        doc(
          `r${i}`,
          'region',
          {},
          { labels: { all: 'yes', id: `r${i}` }, selector: { all: 'yes', id: `g${i}` }, actions: merge() },
        ),
      );
      documents.push(
        doc(
          `s${i}`,
          'site',
          {},
          { labels: { all: 'yes' }, selector: { id: `r${i}`, all: 'yes' }, actions: merge() },
        ),
      );
      documents.push(
        doc(`t${i}`, 'site', {}, { labels: { all: 'yes' }, selector: { id: `g${i}` }, actions: merge() }),
      );
    }
    const out = renderDocuments(documents);
    assert.deepEqual(dataOf(out, 's4999'), { v: 4999 });
    assert.deepEqual(dataOf(out, 't17'), { v: 17 });
  });
});
