import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { draft07ValidatorSource, schemaCompiler } from './json-schema.js';
import { DRAFT07_VALIDATOR_SOURCE } from './json-schema-meta.js';

const require = createRequire(import.meta.url);

interface PlainAjv {
  validateSchema(schema: unknown): boolean;
  compile(schema: unknown): unknown;
  errors?: unknown;
}

/** Ajv as it is without the generated meta-schema validator: it compiles the meta-schema itself. */
function plainAjv(): PlainAjv {
  const Ajv = require('ajv').default as new (options: Record<string, unknown>) => PlainAjv;
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, validateSchema: true });
  (require('ajv-formats').default as (ajv: PlainAjv) => void)(ajv);
  return ajv;
}

const KEYWORDS = [
  'type',
  'properties',
  'required',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'enum',
  'items',
  'additionalProperties',
  'pattern',
  'format',
  'default',
  'minLength',
  'maxItems',
  'uniqueItems',
  'oneOf',
  'anyOf',
  'not',
  '$ref',
  'definitions',
  'dependencies',
  'const',
];
const leaf = fc.oneof(
  fc.constantFrom('object', 'string', 'integer', 'int', 'array', 'number', 'boolean', 'null', '#', 'email'),
  fc.integer({ min: -3, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
);
const schemaLike = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYWORDS, 'a', 'b'), tie('node'), { maxKeys: 4 }),
  ),
})).node;

describe('the generated draft-07 meta-schema validator', () => {
  it('is what the installed Ajv generates for this set-up', async () => {
    const source = await draft07ValidatorSource();
    if (process.env.DM_WRITE_META === '1') {
      const file = fileURLToPath(
        new URL('../../../../client/src/document/json-schema-meta.ts', import.meta.url),
      );
      const text = readFileSync(file, 'utf8');
      const head = text.slice(0, text.indexOf('export const'));
      writeFileSync(file, `${head}export const DRAFT07_VALIDATOR_SOURCE = ${JSON.stringify(source)};\n`);
      return;
    }
    assert.equal(
      DRAFT07_VALIDATOR_SOURCE,
      source,
      'json-schema-meta.ts is stale: DM_WRITE_META=1 node --test dist/client/src/document/json-schema.test.js',
    );
  });

  it('schemaCompiler() judges schemas exactly as Ajv compiling its own meta-schema does (property)', () => {
    const primed = schemaCompiler({ useDefaults: true, validateSchema: true }) as unknown as PlainAjv;
    const plain = plainAjv();
    const outcome = (ajv: PlainAjv, schema: unknown) => {
      const valid = ajv.validateSchema(schema);
      let compiled: string;
      try {
        ajv.compile(schema);
        compiled = 'ok';
      } catch (error) {
        compiled = (error as Error).message;
      }
      return { valid, errors: valid ? null : ajv.errors, compiled };
    };
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...KEYWORDS), schemaLike, { maxKeys: 5 }), (schema) => {
        assert.deepEqual(outcome(primed, schema), outcome(plain, schema));
      }),
      { numRuns: 400, seed: 20261126 },
    );
  });

  it('an invalid template schema fails to compile with the meta-schema message', () => {
    const compiler = schemaCompiler({ useDefaults: true, validateSchema: true });
    assert.throws(
      () => compiler.compile({ type: 'object', properties: { a: { type: 'integr' } } }),
      /^Error: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/,
    );
  });
});
