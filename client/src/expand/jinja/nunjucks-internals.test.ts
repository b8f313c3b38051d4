/**
 * The nunjucks internals the Jinja compatibility layer relies on: the installed nunjucks must
 * have every one (a nunjucks upgrade that renames or drops one fails here, naming it), and the
 * check must notice a missing one.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import {
  COMPILER_OVERRIDABLE,
  checkInternals,
  NUNJUCKS_VERSION,
  newCompiler,
  newParser,
  PARSER_OVERRIDABLE,
  RUNTIME_REPLACED,
  token,
  transform,
} from './nunjucks-internals.js';

const require = createRequire(import.meta.url);

describe('nunjucks internals used by the Jinja compatibility layer', () => {
  it('the installed nunjucks is the pinned version and has every internal used', () => {
    assert.equal((require('nunjucks/package.json') as { version: string }).version, NUNJUCKS_VERSION);
    assert.deepEqual(checkInternals(require('nunjucks'), require('nunjucks/src/transformer')), []);
  });

  it('a nunjucks without one of them is reported by name', () => {
    const real = require('nunjucks') as Record<string, unknown>;
    const compiler = real.compiler as { Compiler: { prototype: object } };
    // A Compiler whose prototype inherits everything but shadows compileFor with nothing.
    const proto = Object.create(compiler.Compiler.prototype) as Record<string, unknown>;
    proto.compileFor = undefined;
    const Compiler = { prototype: proto };
    const runtime = { ...(real.runtime as object) } as Record<string, unknown>;
    delete runtime.memberLookup;
    const doctored = { ...real, compiler: { Compiler }, runtime };
    const problems = checkInternals(doctored, require('nunjucks/src/transformer'));
    assert.deepEqual(problems, ['Compiler.prototype.compileFor', 'runtime.memberLookup']);
    assert.ok(checkInternals(undefined, undefined).length > 20);
  });

  it('lists what it overrides and replaces', () => {
    assert.ok(PARSER_OVERRIDABLE.includes('parseAggregate'));
    assert.ok(COMPILER_OVERRIDABLE.includes('compileSet'));
    assert.ok(RUNTIME_REPLACED.includes('memberLookup'));
  });

  it('parser and compiler overrides are per instance and get the original as base', () => {
    const seen: string[] = [];
    const parser = newParser('{{ 1.5 }}', {
      parsePrimary(base, ...args) {
        const tok = this.peekToken();
        seen.push(tok.type);
        return base(...args);
      },
    });
    const ast = transform(parser.parseAsRoot(), 't');
    assert.deepEqual(seen, [token('TOKEN_FLOAT')]);
    const compiler = newCompiler('t', {
      compileLiteral(base, node, frame) {
        seen.push(`literal ${String(node.value)}`);
        return base(node, frame);
      },
    });
    compiler.compile(ast, undefined as never);
    assert.match(compiler.getCode(), /1\.5/);
    assert.deepEqual(seen.slice(1), ['literal 1.5']);
    // A fresh compiler is untouched: nothing global was patched.
    const plain = newCompiler('t', {});
    plain.compile(transform(newParser('{{ 2 }}', {}).parseAsRoot(), 't'), undefined as never);
    assert.equal(seen.length, 2);
  });
});
