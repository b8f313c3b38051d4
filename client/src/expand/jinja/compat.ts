/**
 * The Jinja2 compatibility layer over nunjucks 3.2.4 (pinned; docs/expansion.md, "Jinja"). Everything
 * that makes nunjucks behave like Python's Jinja2 lives here, through nunjucks' public pieces
 * (Environment, parser, compiler, nodes, runtime), without touching nunjucks' shared prototypes:
 *
 * - parser, per instance: integral float literals (`1.0`) stay floats; `x[a:b:c]` slices.
 * - code generation, per compiler instance (each adjustment has a test in test/expand/jinja-fidelity.test.ts):
 *   Python truthiness in `if`/`not`/`and`/`or`/inline if; `and`/`or` return an operand; Python
 *   arithmetic (`+` on lists, `*` on strings, `/` gives a float, `%` formats strings); `==` deep
 *   and chained comparisons; `~` and output print Python values (`True`, `None`, `{'a': 1}`);
 *   `(a, b)` is a tuple; `{% for x in xs if cond %}` filters the loop; `{% set %}` inside a loop
 *   does not leak out of it; unknown filters and tests are rejected at compile time with the
 *   construct and line.
 * - runtime: member lookup through python-methods.ts (dict/str/list methods, negative indexes,
 *   no prototype or host object reachable), Python printing, Jinja2 filters, tests, globals.
 * - a template's final newline is dropped (`keep_trailing_newline=False`), autoescape is off.
 */

import {
  isDict,
  isIndexKey,
  makeDict,
  num,
  PyError,
  PyFloat,
  PyTuple,
  pyAdd,
  pyCompare,
  pyDiv,
  pyEquals,
  pyFloorDiv,
  pyIn,
  pyKeys,
  pyMod,
  pyMul,
  pyNeg,
  pyPow,
  pyStr,
  pySub,
  pyTruthy,
} from '../../python/values.js';
import { FILTERS, isNamespace, makeGlobals, TESTS } from './filters.js';
import { escapeHtml } from './filters-text.js';
import {
  baseRuntime,
  type CompilerOverrides,
  defineNode,
  lastTokenLine,
  makeMacroBase,
  type NjCompiler,
  type NjEnvironment,
  type NjFrame,
  type NjNode,
  type NjParser,
  type NjTemplate,
  newCompiler,
  newEnvironment,
  newParser,
  nodeClass,
  SafeString,
  type TokenName,
  templateFromCode,
  token,
  transform,
} from './nunjucks-internals.js';
import { LexerSyntaxError, pythonTokens } from './python-lexer.js';
import {
  BlockedError,
  isBlockedName,
  iterate,
  lookupCallee,
  lookupMember,
  PySlice,
} from './python-methods.js';

/** A compile error in a template, with its line: becomes a DmError at the module's edge. */
export class JinjaCompileError extends Error {
  constructor(
    message: string,
    readonly lineno: number | undefined,
  ) {
    super(message);
    this.name = 'JinjaCompileError';
  }
}

const DmTruthy = defineNode('DmTruthy', ['target']);
const DmSlice = defineNode('DmSlice', ['start', 'stop', 'step']);
const DmLoopFilter = defineNode('DmLoopFilter', ['arr', 'cond', 'name']);
const DmIterationScope = defineNode('DmIterationScope', ['body']);
const DmWith = defineNode('DmWith', ['targets', 'values', 'body']);
/** A JavaScript identifier of the generated code used as an expression (a recursive loop's items). */
const DmRaw = defineNode('DmRaw', ['code']);
const DmMacroExtras = defineNode('DmMacroExtras', ['usesVarargs', 'usesKwargs', 'macroName']);
/** `{% autoescape value %}…{% endautoescape %}` (a constant value). */
const DmAutoescape = defineNode('DmAutoescape', ['value', 'body']);
/** What a for loop iterates (none is an error, as in Python). */
const DmIterable = defineNode('DmIterable', ['target']);
/** A for loop's `{% else %}` body, compiled in the scope around the loop. */
const DmOuterScope = defineNode('DmOuterScope', ['body']);
/** The body of a `required` block: rendering it (not overridden) is an error. */
const DmRequiredBlock = defineNode('DmRequiredBlock', ['blockName']);
const EXTRA_TYPES = [
  DmTruthy,
  DmSlice,
  DmLoopFilter,
  DmIterationScope,
  DmWith,
  DmMacroExtras,
  DmRaw,
  DmRequiredBlock,
  DmOuterScope,
  DmAutoescape,
  DmIterable,
];

/** Every node below `node` (fields and children), depth first. */
function* walk(node: unknown, depth = 0): Generator<NjNode> {
  if (depth > 500 || !node || typeof node !== 'object') return;
  const n = node as NjNode;
  if (typeof n.typename === 'string') yield n;
  for (const [key, value] of Object.entries(n)) {
    if (key === 'typename' || key === 'lineno' || key === 'colno') continue;
    if (Array.isArray(value)) for (const v of value) yield* walk(v, depth + 1);
    else if (value && typeof value === 'object' && typeof (value as NjNode).typename === 'string')
      yield* walk(value, depth + 1);
  }
}

/** Names `x` read as `loop.x` anywhere in `node`. */
function loopAttributes(node: NjNode): Set<string> {
  const out = new Set<string>();
  for (const n of walk(node)) {
    const target = n.target as NjNode | undefined;
    const val = n.val as NjNode | undefined;
    if (n.typename === 'LookupVal' && target?.typename === 'Symbol' && target.value === 'loop') {
      if (val?.typename === 'Literal') out.add(String(val.value));
    }
  }
  return out;
}

function truthy(node: NjNode): NjNode {
  return new DmTruthy(node.lineno, node.colno, node);
}

// ---------------------------------------------------------------- parser adjustments

/** Jinja2's words for the tags a block is waiting for: `'endfor' or 'else'`. */
function jinjaTagList(names: readonly string[]): string {
  return names
    .filter((n) => n !== 'elseif')
    .map((n) => `'${n}'`)
    .join(' or ');
}

function innermostBlock(names: readonly string[]): string {
  return (names.find((n) => n.startsWith('end')) ?? names[0] ?? '').replace(/^end/, '');
}

/** A syntax error already worded as Jinja2 words it. */
class JinjaSyntaxError extends Error {
  constructor(
    message: string,
    readonly lineno: number,
  ) {
    super(message);
  }
}

function makeParser(src: string): NjParser {
  // The tags each open block waits for, innermost last (for Jinja2's end-of-template errors).
  const open: string[][] = [];
  // Whether each `for` tag being parsed ends with `recursive`, outermost first.
  const recursiveFor: boolean[] = [];
  return newParser(
    src,
    {
      // `{% for x in xs [if cond] recursive %}`: the keyword ends the for tag (nunjucks knows none).
      advanceAfterBlockEnd(base, ...args) {
        if (args[0] === 'for') recursiveFor.push(this.skipSymbol('recursive'));
        return base(...args);
      },
      parseFor(base) {
        const mark = recursiveFor.length;
        const node = base() as NjNode;
        if (recursiveFor[mark]) node.recursive = true;
        recursiveFor.length = mark;
        return node;
      },
      parseUntilBlocks(base, ...names) {
        const tags = names as string[];
        open.push(tags);
        let body: unknown;
        try {
          body = base(...tags);
        } catch (error) {
          const e = error as { message?: string; lineno?: number };
          const unknown = /unknown block tag: (\S+)/.exec(String(e.message ?? ''));
          if (error instanceof JinjaSyntaxError || !unknown) throw error;
          const tag = unknown[1]!;
          const line = typeof e.lineno === 'number' ? e.lineno : lastTokenLine(src);
          const nesting = open.some((o) => o.includes(tag))
            ? ' You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for'
            : ' Jinja was looking for the following tags:';
          throw new JinjaSyntaxError(
            `Encountered unknown tag '${tag}'.${nesting} ${jinjaTagList(tags)}. The innermost block that needs to be closed is '${innermostBlock(tags)}'.`,
            line,
          );
        } finally {
          open.pop();
        }
        if (!this.peekToken()) {
          throw new JinjaSyntaxError(
            `Unexpected end of template. Jinja was looking for the following tags: ${jinjaTagList(tags)}. The innermost block that needs to be closed is '${innermostBlock(tags)}'.`,
            lastTokenLine(src),
          );
        }
        return body;
      },
      parsePrimary(base, ...args) {
        const tok = this.peekToken();
        const node = base(...args) as NjNode;
        if (tok && tok.type === token('TOKEN_FLOAT') && node.typename === 'Literal') {
          const value = node.value as number;
          if (Number.isInteger(value)) node.value = new PyFloat(value);
        }

        return node;
      },
      // `{% set a, b = 1, 2 %}` (tuple value) and `{% set ns.x = … %}` as Jinja2 parses them.
      parseSet() {
        const tag = this.peekToken();
        if (!this.skipSymbol('set')) this.fail('parseSet: expected set', tag.lineno, tag.colno);
        const node = new (nodeClass('Set'))(tag.lineno, tag.colno, []);
        const targets = node.targets as NjNode[];
        for (;;) {
          targets.push(this.parsePrimary());
          if (!this.skip(token('TOKEN_COMMA'))) break;
        }
        if (!this.skipValue(token('TOKEN_OPERATOR'), '=')) {
          if (!this.skip(token('TOKEN_BLOCK_END'))) {
            this.fail("expected '=' or the end of the set tag", tag.lineno, tag.colno);
          }
          node.body = new (nodeClass('Capture'))(tag.lineno, tag.colno, this.parseUntilBlocks('endset'));
          node.value = null;
          this.advanceAfterBlockEnd();
          return node;
        }
        const first = this.parseExpression();
        if (this.skip(token('TOKEN_COMMA'))) {
          const items = [first];
          while (this.peekToken().type !== token('TOKEN_BLOCK_END')) {
            items.push(this.parseExpression());
            if (!this.skip(token('TOKEN_COMMA'))) break;
          }
          const tuple = new (nodeClass('Group'))(first.lineno, first.colno, items);
          tuple.isTuple = true;
          node.value = tuple;
        } else node.value = first;
        this.advanceAfterBlockEnd(tag.value);
        return node;
      },
      // `{% with a = x, b = y %}…{% endwith %}` (a Jinja2 built-in nunjucks lexes as a name): a new scope.
      parseStatement(base) {
        const tok = this.peekToken();
        if (tok && tok.type === token('TOKEN_SYMBOL') && tok.value === 'autoescape') {
          // `{% autoescape true %}…{% endautoescape %}`: output inside is HTML-escaped (or not).
          this.nextToken();
          const value = this.parseExpression();
          this.advanceAfterBlockEnd('autoescape');
          const body = this.parseUntilBlocks('endautoescape');
          this.advanceAfterBlockEnd();
          return new DmAutoescape(tok.lineno, tok.colno, value, body);
        }
        if (!tok || tok.type !== token('TOKEN_SYMBOL') || tok.value !== 'with') return base();
        this.nextToken();
        const targets: NjNode[] = [];
        const values: NjNode[] = [];
        while (this.peekToken().type !== token('TOKEN_BLOCK_END')) {
          const target = this.parsePrimary();
          if (target.typename !== 'Symbol') this.fail('with: expected a name', target.lineno, target.colno);
          if (!this.skipValue(token('TOKEN_OPERATOR'), '='))
            this.fail('with: expected =', tok.lineno, tok.colno);
          targets.push(target);
          values.push(this.parseExpression());
          if (!this.skip(token('TOKEN_COMMA'))) break;
        }
        this.advanceAfterBlockEnd('with');
        const body = this.parseUntilBlocks('endwith');
        this.advanceAfterBlockEnd();
        return new DmWith(tok.lineno, tok.colno, targets, values, body);
      },
      // Tests as Jinja2 parses them: `is name`, `is name(args)`, or `is name arg` (one argument
      // without parentheses, as in `x is divisibleby 3`).
      parseIs() {
        let node = (this as NjParser & { parseCompare(): NjNode }).parseCompare();
        if (this.skipSymbol('is')) {
          const not = this.skipSymbol('not');
          const nameTok = this.nextToken();
          if (
            !nameTok ||
            ![token('TOKEN_SYMBOL'), token('TOKEN_NONE'), token('TOKEN_BOOLEAN')].includes(nameTok.type)
          ) {
            this.fail('expected a test name after "is"', nameTok?.lineno, nameTok?.colno);
          }
          const name = nameTok.type === token('TOKEN_NONE') ? 'none' : nameTok.value;
          let test: NjNode = new (nodeClass('Symbol'))(nameTok.lineno, nameTok.colno, name);
          const next = this.peekToken();
          const argStarts: TokenName[] = [
            'TOKEN_INT',
            'TOKEN_FLOAT',
            'TOKEN_STRING',
            'TOKEN_BOOLEAN',
            'TOKEN_NONE',
            'TOKEN_LEFT_BRACKET',
            'TOKEN_LEFT_CURLY',
          ];
          const keyword = ['and', 'or', 'else', 'if', 'not', 'in', 'is'];
          if (next && next.type === token('TOKEN_LEFT_PAREN')) {
            test = new (nodeClass('FunCall'))(test.lineno, test.colno, test, this.parseSignature());
          } else if (
            next &&
            (argStarts.some((t) => next.type === token(t)) ||
              (next.type === token('TOKEN_SYMBOL') && !keyword.includes(next.value)))
          ) {
            const arg = this.parsePrimary();
            test = new (nodeClass('FunCall'))(
              test.lineno,
              test.colno,
              test,
              new (nodeClass('NodeList'))(arg.lineno, arg.colno, [arg]),
            );
          }
          node = new (nodeClass('Is'))(node.lineno, node.colno, node, test);
          if (not) node = new (nodeClass('Not'))(node.lineno, node.colno, node);
        }
        return node;
      },
      // Literals `( )`, `[ ]`, `{ }` as Jinja2 parses them: trailing commas, `(a,)` tuples, and
      // `x[a:b:c]` slices (a DmSlice node inside the subscript).
      parseAggregate() {
        const tok = this.peekToken();
        const kinds: Record<string, [string, string]> = {
          [token('TOKEN_LEFT_PAREN')]: ['Group', token('TOKEN_RIGHT_PAREN')],
          [token('TOKEN_LEFT_BRACKET')]: ['Array', token('TOKEN_RIGHT_BRACKET')],
          [token('TOKEN_LEFT_CURLY')]: ['Dict', token('TOKEN_RIGHT_CURLY')],
        };
        const kind = tok ? kinds[tok.type] : undefined;
        if (!kind) return null;
        this.nextToken();
        const [type, close] = kind;
        const children: NjNode[] = [];
        let trailingComma = false;
        for (;;) {
          if (this.skip(close)) break;
          if (children.length > 0) {
            if (!this.skip(token('TOKEN_COMMA')))
              this.fail('parseAggregate: expected comma after expression', tok.lineno, tok.colno);
            trailingComma = true;
            if (this.skip(close)) break;
          }
          trailingComma = false;
          if (type === 'Dict') {
            const key = this.parsePrimary();
            if (!this.skip(token('TOKEN_COLON')))
              this.fail('parseAggregate: expected colon after dict key', tok.lineno, tok.colno);
            const value = this.parseExpression();
            children.push(new (nodeClass('Pair'))(key.lineno, key.colno, key, value));
          } else if (type === 'Array') {
            const parts: (NjNode | null)[] = [null, null, null];
            let isSlice = false;
            let index = 0;
            if (this.peekToken().type !== token('TOKEN_COLON')) parts[0] = this.parseExpression();
            while (this.skip(token('TOKEN_COLON'))) {
              isSlice = true;
              index++;
              if (index > 2) this.fail('parseSlice: too many slice components', tok.lineno, tok.colno);
              const next = this.peekToken().type;
              if (next !== token('TOKEN_COLON') && next !== close && next !== token('TOKEN_COMMA')) {
                parts[index] = this.parseExpression();
              }
            }
            if (isSlice) {
              const lit = (v: unknown) => new (nodeClass('Literal'))(tok.lineno, tok.colno, v);
              children.push(
                new DmSlice(
                  tok.lineno,
                  tok.colno,
                  parts[0] ?? lit(null),
                  parts[1] ?? lit(null),
                  parts[2] ?? lit(null),
                ),
              );
            } else children.push(parts[0]!);
          } else children.push(this.parseExpression());
        }
        const node = new (nodeClass(type as 'Group' | 'Array' | 'Dict'))(tok.lineno, tok.colno, children);
        if (type === 'Group' && trailingComma) node.isTuple = true;
        return node;
      },
      // `{%- raw -%}…{%- endraw -%}`: the body up to the first `endraw` (raw blocks do not nest in
      // Jinja2), with the whitespace control of both tags.
      parseRaw(base, tagName) {
        if (tagName !== undefined && tagName !== 'raw') return base(tagName);
        const begun = this.advanceAfterBlockEnd();
        this.dropLeadingWhitespace = false;
        const found = this.tokens._extractRegex(/^([\s\S]*?)\{%(-?)\s*endraw\s*(-?)%\}/);
        if (!found) throw new JinjaSyntaxError('Missing end of raw directive', begun.lineno + 1);
        let text = found[1]!;
        if (begun.value.startsWith('-')) text = text.replace(/^\s+/, '');
        if (found[2]) text = text.replace(/\s+$/, '');
        if (found[3]) this.tokens._extractRegex(/^\s*/);
        return new (nodeClass('Output'))(begun.lineno, begun.colno, [
          new (nodeClass('TemplateData'))(begun.lineno, begun.colno, text),
        ]);
      },
      // `{% block name scoped %}`, `{% block name required %}` (a required block is overridden
      // by a child template, or rendering it fails as in Jinja2).
      parseBlock() {
        const tag = this.peekToken();
        this.skipSymbol('block');
        const node = new (nodeClass('Block'))(tag.lineno, tag.colno);
        node.name = this.parsePrimary();
        const name = node.name as NjNode;
        if (name.typename !== 'Symbol')
          this.fail('parseBlock: variable name expected', tag.lineno, tag.colno);
        let required = false;
        for (;;) {
          if (this.skipSymbol('scoped')) continue;
          if (this.skipSymbol('required')) {
            required = true;
            continue;
          }
          break;
        }
        this.advanceAfterBlockEnd(tag.value);
        const body = this.parseUntilBlocks('endblock') as NjNode;
        this.skipSymbol('endblock');
        this.skipSymbol(String(name.value));
        const end = this.peekToken();
        if (!end) this.fail('parseBlock: expected endblock, got end of file');
        this.advanceAfterBlockEnd(end.value);
        if (required) {
          const blank = body.children.every(
            (child) =>
              child.typename === 'Output' &&
              child.children.every((c) => c.typename === 'TemplateData' && /^\s*$/.test(String(c.value))),
          );
          if (!blank)
            throw new JinjaSyntaxError(
              'Required blocks can only contain comments or whitespace',
              tag.lineno + 1,
            );
          node.body = new (nodeClass('NodeList'))(tag.lineno, tag.colno, [
            new DmRequiredBlock(tag.lineno, tag.colno, String(name.value)),
          ]);
        } else node.body = body;
        return node;
      },
      // `{% filter f(args)|g %}…{% endfilter %}`: the body through a chain of filters.
      parseFilterStatement() {
        const tag = this.peekToken();
        this.skipSymbol('filter');
        let node: NjNode | undefined;
        let first: NjNode | undefined;
        do {
          const name = this.parseFilterName();
          const args = this.parseFilterArgs(name);
          if (!node) {
            first = name;
            node = new (nodeClass('Filter'))(name.lineno, name.colno, name, null);
            node.dmPending = args;
          } else {
            node = new (nodeClass('Filter'))(
              name.lineno,
              name.colno,
              name,
              new (nodeClass('NodeList'))(name.lineno, name.colno, [node, ...args]),
            );
          }
        } while (this.skip(token('TOKEN_PIPE')));
        this.advanceAfterBlockEnd(tag.value);
        const body = new (nodeClass('Capture'))(
          first!.lineno,
          first!.colno,
          this.parseUntilBlocks('endfilter'),
        );
        this.advanceAfterBlockEnd();
        // The innermost filter takes the body as its value.
        let inner = node!;
        while (inner.args) inner = (inner.args as NjNode).children[0]!;
        inner.args = new (nodeClass('NodeList'))(inner.lineno, inner.colno, [
          body,
          ...(inner.dmPending as NjNode[]),
        ]);
        delete inner.dmPending;
        return new (nodeClass('Output'))(tag.lineno, tag.colno, [node!]);
      },
    },
    {},
    pythonTokens,
  );
}

// ---------------------------------------------------------------- code generation adjustments

/** Emits `open` arg, arg, … `close`, each argument an expression. */
function emitCall(c: NjCompiler, open: string, args: unknown[], frame: NjFrame, close: string): void {
  c._emit(open);
  args.forEach((arg, i) => {
    if (i > 0) c._emit(', ');
    c._compileExpression(arg as NjNode, frame);
  });
  c._emit(close);
}

function makeCompiler(name: string): NjCompiler {
  let loopDepth = 0;
  // Inside `{% if %}` or an inline if (Jinja2's "soft" frames), an unknown filter or test fails
  // only when it runs; elsewhere when the template compiles.
  let soft = 0;
  // `{% autoescape %}` blocks being compiled, innermost last.
  const escaping: boolean[] = [];
  // The innermost loop being compiled, when it is recursive: what `loop(items)` calls.
  const loops: ({ fn: string; depth: string } | null)[] = [];
  const at = (node: NjNode) => `lineno = ${node.lineno}, colno = ${node.colno}, `;
  const bin = (fn: string) =>
    function (this: NjCompiler, _base: unknown, node: NjNode, frame: NjFrame) {
      this._emit(`(${at(node)}runtime.${fn}(`);
      this.compile(node.left as NjNode, frame);
      this._emit(', ');
      this.compile(node.right as NjNode, frame);
      this._emit('))');
    };
  const overrides: CompilerOverrides = {
    assertType(base, node: NjNode, ...types: unknown[]) {
      if (EXTRA_TYPES.some((t) => node instanceof t)) return;
      base(node, ...types);
    },
    compileLookupVal(_base, node: NjNode, frame: NjFrame) {
      this._emit(`(${at(node)}runtime.memberLookup((`);
      this._compileExpression(node.target as NjNode, frame);
      this._emit('),');
      this._compileExpression(node.val as NjNode, frame);
      this._emit('))');
    },
    compileSymbol(base, node: NjNode, frame: NjFrame) {
      // A name starting with a digit is a malformed number literal (`1e`, `1x`).
      if (/^\d/.test(String(node.value))) {
        this.fail(`invalid number literal '${String(node.value)}'`, node.lineno, node.colno);
      }
      base(node, frame);
    },
    compileFunCall(base, node: NjNode, frame: NjFrame) {
      const callee = node.name as NjNode;
      const recursive = loops[loops.length - 1];
      if (callee.typename === 'Symbol' && callee.value === 'loop' && recursive) {
        // `loop(items)` in a recursive loop's body: the loop again, one level deeper.
        const args = (node.args as NjNode).children;
        if (args.length !== 1 || args[0]!.typename === 'KeywordArgs')
          this.fail('loop() takes exactly one argument, the items to loop over', node.lineno, node.colno);
        this._emit(`(${at(node)}${recursive.fn}(`);
        this._compileExpression(args[0]!, frame);
        this._emit(`, ${recursive.depth} + 1))`);
        return;
      }
      if (callee.typename !== 'LookupVal') {
        base(node, frame);
        return;
      }
      // `x.name(...)`: resolve the callee as a method first (lookupCallee).
      const name = String(this._getNodeName(callee)).replace(/"/g, '\\"');
      this._emit(`(lineno = ${node.lineno}, colno = ${node.colno}, runtime.callWrap(runtime.calleeLookup((`);
      this._compileExpression(callee.target as NjNode, frame);
      this._emit('),');
      this._compileExpression(callee.val as NjNode, frame);
      this._emit(`), "${name}", context, `);
      this._compileAggregate(node.args as NjNode, frame, '[', ']');
      this._emit('))');
    },
    compileDmTruthy(_base, node: NjNode, frame: NjFrame) {
      this._emit('runtime.truthy(');
      this.compile(node.target as NjNode, frame);
      this._emit(')');
    },
    compileDmSlice(_base, node: NjNode, frame: NjFrame) {
      emitCall(this, 'runtime.slice(', [node.start, node.stop, node.step], frame, ')');
    },
    compileArray(_base, node: NjNode, frame: NjFrame) {
      if (node.children.length === 1 && node.children[0] instanceof DmSlice) {
        this.compile(node.children[0], frame);
        return;
      }
      this._compileAggregate(node, frame, '[', ']');
    },
    compileGroup(_base, node: NjNode, frame: NjFrame) {
      if (node.children.length === 1 && !node.isTuple) {
        this._compileAggregate(node, frame, '(', ')');
        return;
      }
      this._emit('runtime.tuple(');
      this._compileAggregate(node, frame, '[', ']');
      this._emit(')');
    },
    compileDict(_base, node: NjNode, frame: NjFrame) {
      for (const pair of node.children) {
        const key = pair.key as NjNode;
        if (isBlockedName(key.value)) {
          this.fail(`access to '${String(key.value)}' is blocked in templates`, key.lineno, key.colno);
        }
      }
      const literalKey = (pair: NjNode) => {
        const key = pair.key as NjNode;
        return key.typename === 'Literal' && typeof key.value === 'string' ? key.value : undefined;
      };
      // A literal with an integer-like key ({"b": 1, "10": 2}): a JS object literal would list
      // "10" first; Python keeps the order written.
      if (!node.children.some((pair) => isIndexKey(literalKey(pair) ?? ''))) {
        this._compileAggregate(node, frame, '{', '}');
        return;
      }
      this._emit('runtime.dict([');
      node.children.forEach((pair, i) => {
        const key = pair.key as NjNode;
        this._emit(`${i > 0 ? ',' : ''}[${JSON.stringify(String(literalKey(pair) ?? key.value))},`);
        this._compileExpression(pair.value as NjNode, frame);
        this._emit(']');
      });
      this._emit('])');
    },
    compileLiteral(base, node: NjNode, frame: NjFrame) {
      if (node.value instanceof PyFloat) this._emit(`runtime.float(${node.value.value})`);
      else base(node, frame);
    },
    compileIf(base, node: NjNode, frame: NjFrame, async: unknown) {
      node.cond = truthy(node.cond as NjNode);
      soft++;
      try {
        base(node, frame, async);
      } finally {
        soft--;
      }
    },
    compileInlineIf(base, node: NjNode, frame: NjFrame) {
      node.cond = truthy(node.cond as NjNode);
      soft++;
      try {
        if (node.else_ === null) {
          this._emit('(');
          this.compile(node.cond as NjNode, frame);
          this._emit('?');
          this.compile(node.body as NjNode, frame);
          this._emit(':undefined)');
          return;
        }
        base(node, frame);
      } finally {
        soft--;
      }
    },
    compileExtends(base, node: NjNode, frame: NjFrame) {
      this._emitLine(`if (!parentTemplate) context.dmTextBeforeExtends = ${this.buffer};`);
      base(node, frame);
    },
    compileDmAutoescape(_base, node: NjNode, frame: NjFrame) {
      const value = node.value as NjNode;
      if (value.typename !== 'Literal' || typeof value.value !== 'boolean') {
        this.fail('dm supports {% autoescape %} with true or false only', node.lineno, node.colno);
      }
      escaping.push(value.value as boolean);
      try {
        this.compile(node.body as NjNode, frame);
      } finally {
        escaping.pop();
      }
    },
    compileOutput(base, node: NjNode, frame: NjFrame) {
      if (!escaping[escaping.length - 1]) {
        base(node, frame);
        return;
      }
      // Inside `{% autoescape true %}`: each value printed escaped, but for what Jinja2 marks
      // safe (the filters below, macro and caller output).
      for (const child of node.children) {
        if (child.typename === 'TemplateData') {
          base(new (nodeClass('Output'))(node.lineno, node.colno, [child]), frame);
          continue;
        }
        const name = child.typename === 'Filter' ? String((child.name as NjNode).value) : '';
        const safe = ['safe', 'escape', 'e', 'tojson', 'urlize', 'xmlattr', 'forceescape'].includes(name);
        this._emit(`${this.buffer} += runtime.${safe ? 'suppressValue' : 'escapeValue'}(`);
        this.compile(child, frame);
        this._emitLine(');');
      }
    },
    compileDmIterable(_base, node: NjNode, frame: NjFrame) {
      this._emit(`(${at(node)}runtime.iterable(`);
      this.compile(node.target as NjNode, frame);
      this._emit('))');
    },
    compileDmRequiredBlock(_base, node: NjNode) {
      this._emitLine(`runtime.requiredBlock(${JSON.stringify(node.blockName)});`);
    },
    // The `{% else %}` of a for loop: the loop's names are the enclosing scope's there.
    compileDmOuterScope(_base, node: NjNode, frame: NjFrame) {
      this.compile(node.body as NjNode, frame.parent ?? frame);
    },
    compileNot(_base, node: NjNode, frame: NjFrame) {
      this._emit('!runtime.truthy(');
      this.compile(node.target as NjNode, frame);
      this._emit(')');
    },
    compileOr(_base, node: NjNode, frame: NjFrame) {
      this._emit('runtime.or(');
      this.compile(node.left as NjNode, frame);
      this._emit(', function() { return ');
      this.compile(node.right as NjNode, frame);
      this._emit('; })');
    },
    compileAnd(_base, node: NjNode, frame: NjFrame) {
      this._emit('runtime.and(');
      this.compile(node.left as NjNode, frame);
      this._emit(', function() { return ');
      this.compile(node.right as NjNode, frame);
      this._emit('; })');
    },
    compileAdd: bin('add'),
    compileSub: bin('sub'),
    compileMul: bin('mul'),
    compileDiv: bin('div'),
    compileFloorDiv: bin('floordiv'),
    compileMod: bin('mod'),
    compilePow: bin('pow'),
    compileConcat: bin('concat'),
    compileIn: bin('inOperator'),
    compileNeg(_base, node: NjNode, frame: NjFrame) {
      this._emit('runtime.neg(');
      this.compile(node.target as NjNode, frame);
      this._emit(')');
    },
    compilePos(_base, node: NjNode, frame: NjFrame) {
      this._emit('runtime.pos(');
      this.compile(node.target as NjNode, frame);
      this._emit(')');
    },
    compileCompare(_base, node: NjNode, frame: NjFrame) {
      const ops = node.ops as NjNode[];
      this._emit('runtime.compare(');
      this.compile(node.expr as NjNode, frame);
      for (const op of ops) {
        this._emit(`, ${JSON.stringify(op.type)}, `);
        this.compile(op.expr as NjNode, frame);
      }
      this._emit(')');
    },
    compileFilter(base, node: NjNode, frame: NjFrame) {
      const filterName = (node.name as NjNode).value as string;
      if (!Object.hasOwn(FILTERS, filterName) && soft === 0) {
        this.fail(`filter '${filterName}' is not supported`, node.lineno, node.colno);
      }
      base(node, frame);
    },
    compileIs(base, node: NjNode, frame: NjFrame) {
      const right = node.right as NjNode;
      let testName = String((right.name as NjNode | undefined)?.value ?? right.value);
      // `is none`/`is true`/`is false` arrive as literals.
      if (right.typename === 'Literal') {
        testName = right.value === null ? 'none' : String(right.value);
        node.right = new (nodeClass('Symbol'))(right.lineno, right.colno, testName);
      }
      if (!Object.hasOwn(TESTS, testName) && soft === 0) {
        this.fail(`test '${testName}' is not supported`, node.lineno, node.colno);
      }
      base(node, frame);
    },
    compileFor(base, node: NjNode, frame: NjFrame) {
      if (node.recursive) {
        // `{% for x in xs recursive %}`: the loop is a function of its items and depth, called
        // here with `xs` at depth 1 and by `loop(children)` in its body one level deeper.
        node.recursive = false;
        const [outer, fn, items, depth] = [this._tmpid(), this._tmpid(), this._tmpid(), this._tmpid()];
        const iterable = node.arr as NjNode;
        const raw = new DmRaw(iterable.lineno, iterable.colno, items);
        // `xs if cond`: the filter applies at every level, to the items given.
        const filtered = iterable.typename === 'InlineIf' && iterable.else_ === null;
        node.arr = filtered
          ? new DmLoopFilter(iterable.lineno, iterable.colno, raw, iterable.cond, node.name)
          : raw;
        node.dmRecursive = { fn, depth };
        this._emitLine(`var ${outer} = frame;`);
        this._emitLine(`var ${fn} = function(${items}, ${depth}) {`);
        this._emitLine(`var frame = ${outer};`);
        const buffer = this._pushBuffer();
        this._emitLine('');
        (this as unknown as { compileFor(n: NjNode, f: NjFrame): void }).compileFor(node, frame);
        this._emitLine(`return new runtime.SafeString(${buffer});`);
        this._popBuffer();
        this._emitLine('};');
        this._emit(`${this.buffer} += runtime.suppressValue(${fn}(`);
        this._compileExpression(filtered ? (iterable.body as NjNode) : iterable, frame);
        this._emitLine(', 1), false);');
        return;
      }
      const arr = node.arr as NjNode;
      // `{% for x in xs if cond %}` parses as an inline if without else: it is a loop filter.
      if (arr.typename === 'InlineIf' && arr.else_ === null) {
        node.arr = new DmLoopFilter(
          arr.lineno,
          arr.colno,
          new DmIterable(arr.lineno, arr.colno, arr.body),
          arr.cond,
          node.name,
        );
      } else node.arr = new DmIterable(arr.lineno, arr.colno, arr);
      // Each iteration starts from the enclosing scope's values (Jinja2): `{% set %}` in one
      // iteration is not seen by the next.
      const body = node.body as NjNode;
      node.body = new DmIterationScope(body.lineno, body.colno, body);
      const otherwise = node.else_ as NjNode | null;
      if (otherwise) node.else_ = new DmOuterScope(otherwise.lineno, otherwise.colno, otherwise);
      loopDepth++;
      loops.push((node.dmRecursive as { fn: string; depth: string } | undefined) ?? null);
      const savedSoft = soft;
      soft = 0;
      try {
        base(node, frame);
      } finally {
        loopDepth--;
        loops.pop();
        soft = savedSoft;
      }
    },
    compileDmRaw(_base, node: NjNode) {
      this._emit(String(node.code));
    },
    compileDmWith(_base, node: NjNode, frame: NjFrame) {
      // Values are evaluated in the enclosing scope, then bound in a new one.
      const targets = node.targets as NjNode[];
      const ids = (node.values as NjNode[]).map((value) => {
        const id = this._tmpid();
        this._emit(`var ${id} = `);
        this._compileExpression(value, frame);
        this._emitLine(';');
        return id;
      });
      this._emitLine('frame = frame.push();');
      const inner = frame.push();
      targets.forEach((t, i) => {
        if (isBlockedName(t.value)) this.fail(`cannot set '${String(t.value)}'`, t.lineno, t.colno);
        this._emitLine(`frame.set(${JSON.stringify(t.value)}, ${ids[i]});`);
      });
      const saved = loopDepth;
      loopDepth++;
      try {
        this.compile(node.body as NjNode, inner);
      } finally {
        loopDepth = saved;
      }
      this._emitLine('frame = frame.pop();');
    },
    compileDmIterationScope(_base, node: NjNode, frame: NjFrame) {
      this._emitLine('frame = frame.push();');
      this.compile(node.body as NjNode, frame.push());
      this._emitLine('frame = frame.pop();');
    },
    compileDmLoopFilter(_base, node: NjNode, frame: NjFrame) {
      const v = this._tmpid();
      const inner = frame.push();
      const target = node.name as NjNode;
      this._emit('runtime.loopFilter(');
      this._compileExpression(node.arr as NjNode, frame);
      this._emit(`, function(${v}) { `);
      if (target.typename === 'Array') {
        target.children.forEach((child, i) => {
          const id = this._tmpid();
          this._emit(`var ${id} = runtime.memberLookup(${v}, ${i}); `);
          inner.set(child.value as string, id);
        });
      } else inner.set(target.value as string, v);
      this._emit('return runtime.truthy(');
      this._compileExpression(node.cond as NjNode, inner);
      this._emit('); })');
    },
    compileMacro(_base, node: NjNode, frame: NjFrame) {
      // Jinja2's `varargs` and `kwargs`: bound at the start of the body (runtime.macroExtras).
      let usesVarargs = false;
      let usesKwargs = false;
      for (const n of walk(node.body)) {
        if (n.typename === 'Symbol' && n.value === 'varargs') usesVarargs = true;
        if (n.typename === 'Symbol' && n.value === 'kwargs') usesKwargs = true;
      }
      const body = node.body as NjNode;
      const macroName = String((node.name as NjNode | undefined)?.value ?? 'caller');
      const positional = ((node.args as NjNode).children ?? []).filter((a) => a.typename === 'Symbol');
      if (
        positional.some((a) => a.value === 'caller') &&
        [...walk(body)].some((n) => n.typename === 'Symbol' && n.value === 'caller')
      ) {
        this.fail(
          'When defining macros or call blocks the special "caller" argument must be omitted or be given a default.',
          node.lineno,
          node.colno,
        );
      }
      body.children.unshift(new DmMacroExtras(node.lineno, node.colno, usesVarargs, usesKwargs, macroName));
      const saved = loopDepth;
      const savedSoft = soft;
      loopDepth = 0;
      soft = 0;
      loops.push(null);
      try {
        // A Jinja2 macro is a closure: it sees the names of the scope it is defined in (a loop's
        // variable of that iteration), so its body is compiled in that scope, not a new one.
        const funcId = this._compileMacro(node, frame);
        const name = String((node.name as NjNode).value);
        frame.set(name, funcId);
        if (frame.parent) this._emitLine(`frame.set(${JSON.stringify(name)}, ${funcId});`);
        else {
          if (!name.startsWith('_')) this._emitLine(`context.addExport(${JSON.stringify(name)});`);
          this._emitLine(`context.setVariable(${JSON.stringify(name)}, ${funcId});`);
        }
      } finally {
        loopDepth = saved;
        soft = savedSoft;
        loops.pop();
      }
    },
    compileDmMacroExtras(_base, node: NjNode) {
      this._emitLine(
        `runtime.macroExtras(frame, ${node.usesVarargs}, ${node.usesKwargs}, ${JSON.stringify(node.macroName)});`,
      );
    },
    _emitLoopBindings(base, node: NjNode, arr: unknown, i: unknown, len: unknown) {
      base(node, arr, i, len);
      // Jinja2's loop attributes nunjucks lacks, emitted only when the body reads them.
      const used = loopAttributes(node.body as NjNode);
      if (used.has('previtem'))
        this._emitLine(`frame.set("loop.previtem", ${i} > 0 ? ${arr}[${i} - 1] : undefined);`);
      if (used.has('nextitem'))
        this._emitLine(`frame.set("loop.nextitem", ${i} < ${len} - 1 ? ${arr}[${i} + 1] : undefined);`);
      const recursive = node.dmRecursive as { depth: string } | undefined;
      if (used.has('depth')) this._emitLine(`frame.set("loop.depth", ${recursive ? recursive.depth : 1});`);
      if (used.has('depth0'))
        this._emitLine(`frame.set("loop.depth0", ${recursive ? `${recursive.depth} - 1` : 0});`);
      if (used.has('cycle') || used.has('changed')) {
        const st = `${String(i)}_st`;
        this._emitLine(`var ${st}; if (${i} === 0) ${st} = runtime.loopState(); ${st}.index0 = ${i};`);
        this._emitLine(`frame.set("loop.cycle", ${st}.cycle); frame.set("loop.changed", ${st}.changed);`);
      }
    },
    compileSet(_base, node: NjNode, frame: NjFrame) {
      const targets = node.targets as NjNode[];
      // `{% set ns.x = … %}`: assigns an attribute of a namespace() object.
      if (targets.length === 1 && targets[0]!.typename === 'LookupVal' && node.value) {
        const target = targets[0]!;
        emitCall(
          this,
          `(${at(node)}runtime.setAttribute(`,
          [target.target, target.val, node.value],
          frame,
          '));',
        );
        this._emitLine('');
        return;
      }
      for (const target of targets) {
        if (target.typename !== 'Symbol')
          this.fail('cannot assign to this target in set', target.lineno, target.colno);
      }
      // `{% set a, b = … %}`: the value is unpacked.
      if (targets.length > 1 && node.value) {
        const values = this._tmpid();
        this._emit(`var ${values} = (${at(node)}runtime.unpack(`);
        this._compileExpression(node.value as NjNode, frame);
        this._emitLine(`, ${targets.length}));`);
        targets.forEach((target, i) => {
          const single = new (nodeClass('Set'))(node.lineno, node.colno, [target]);
          single.value = new (nodeClass('Symbol'))(node.lineno, node.colno, `${values}[${i}]`);
          single.rawValue = `${values}[${i}]`;
          (this as unknown as { compileSet(n: NjNode, f: NjFrame): void }).compileSet(single, frame);
        });
        return;
      }
      // As nunjucks' compileSet, except that inside a loop the variable is the loop's own
      // (Jinja2 scoping) instead of updating a variable of the enclosing scope.
      const ids = targets.map((target) => {
        const name = target.value as string;
        if (isBlockedName(name)) this.fail(`cannot set '${name}'`, node.lineno, node.colno);
        let id = loopDepth > 0 ? undefined : (frame.lookup(name) as string | undefined);
        if (id === null || id === undefined) {
          id = this._tmpid();
          this._emitLine(`var ${id};`);
        }
        return id;
      });
      this._emit(`${ids.join(' = ')} = `);
      if (typeof node.rawValue === 'string') this._emit(node.rawValue);
      else if (node.value) this._compileExpression(node.value as NjNode, frame);
      else this.compile(node.body as NjNode, frame);
      this._emitLine(';');
      targets.forEach((target, i) => {
        const name = JSON.stringify(target.value);
        this._emitLine(`frame.set(${name}, ${ids[i]}, ${loopDepth > 0 ? 'false' : 'true'});`);
        this._emitLine(`if(frame.topLevel) { context.setVariable(${name}, ${ids[i]}); }`);
        if (!(target.value as string).startsWith('_')) {
          this._emitLine(`if(frame.topLevel) { context.addExport(${name}, ${ids[i]}); }`);
        }
      });
    },
  };
  return newCompiler(name, overrides);
}

/**
 * Jinja2 drops one trailing newline of a template and normalises line endings. `{%+` and `+%}`
 * (turn off lstrip_blocks/trim_blocks for one tag) mean plain `{%`/`%}` under Jinja2's defaults,
 * which have both off; nunjucks' lexer does not know them.
 */
export function prepareSource(src: string): string {
  const normal = src.replace(/\r\n?/g, '\n').replace(/\{%\+/g, '{%').replace(/\+%\}/g, '%}');
  return normal.endsWith('\n') ? normal.slice(0, -1) : normal;
}

const PARENT_RENDER =
  /parentTemplate\.rootRenderFunc\(env, context, frame, runtime, cb\);\n\} else \{\ncb\(null, (\w+)\);/;

/**
 * Jinja2 prints what a template outputs before its `{% extends %}`; nunjucks drops it. That
 * output is kept when the tag runs (compileExtends) and the root function's end is rewritten to
 * put it before the parent's (the text nunjucks generates there is checked: if it changes, this
 * fails loudly).
 */
function keepTextBeforeExtends(code: string): string {
  if (!code.includes('parentTemplate = ')) return code;
  const m = PARENT_RENDER.exec(code);
  if (!m) throw new Error("nunjucks' root function is not as compat.ts expects (keepTextBeforeExtends)");
  return code.replace(
    PARENT_RENDER,
    `parentTemplate.rootRenderFunc(env, context, frame, runtime, function(e, r) { cb(e, e ? r : (context.dmTextBeforeExtends || "") + r); });\n} else {\ncb(null, ${m[1]});`,
  );
}

type RootFn = (env: unknown, context: unknown, frame: unknown, runtime: unknown, cb: unknown) => void;

/** Compiles a template to the functions nunjucks' Template runs, bound to the Jinja2 runtime. */
export function compileTemplate(src: string, name: string): Record<string, RootFn> {
  let code: string;
  try {
    const prepared = prepareSource(src);
    const parser = makeParser(prepared);
    const ast = transform(parser.parseAsRoot(), name);
    const compiler = makeCompiler(name);
    compiler.compile(ast, undefined as unknown as NjFrame);
    code = keepTextBeforeExtends(compiler.getCode());
  } catch (error) {
    // nunjucks' parser names no line when it meets the end of the text (and reads a null token
    // there): the failure is on the template's last line.
    const lastLine = src.split('\n').length;
    if (error instanceof JinjaSyntaxError || error instanceof LexerSyntaxError)
      throw new JinjaCompileError(error.message, error.lineno ?? lastLine);
    if (error instanceof TypeError && /\bof null\b/.test(error.message))
      throw new JinjaCompileError('unexpected end of template', lastLine);
    const e = error as { lineno?: number; message?: string };
    const tag = /^(?:\(unknown path\)\s*(?:\[Line \d+, Column \d+\])?\s*)?unknown block tag: (\S+)$/.exec(
      e.message ?? '',
    );
    if (tag) throw new JinjaCompileError(`Encountered unknown tag '${tag[1]}'.`, e.lineno ?? lastLine);
    const message = (e.message ?? String(error))
      .replace(/^\(unknown path\)\s*(\[Line \d+, Column \d+\])?\s*/, '')
      // The name of the parser function that failed (`parseAggregate: expected …`).
      .replace(/^parse[A-Z]\w*: /, '');
    throw new JinjaCompileError(message.trim(), e.lineno ?? lastLine);
  }
  const props = new Function(code)() as Record<string, RootFn>;
  // Only `root` is entered by nunjucks itself (with its own runtime); blocks are called from
  // compiled code, which passes the runtime it got, and `super()` finds a block by identity.
  const root = props.root!;
  return { ...props, root: (env, context, frame, _runtime, cb) => root(env, context, frame, RUNTIME, cb) };
}

// ---------------------------------------------------------------- runtime

const GLOBALS = makeGlobals();
/** `varargs`/`kwargs` of the macro calls in progress (innermost last). */
const MACRO_EXTRAS: { varargs: unknown[]; kwargs: Record<string, unknown>; named: number }[] = [];

function plainText(value: unknown): unknown {
  return value instanceof SafeString ? String(value) : value;
}

function lookupName(context: { ctx: Record<string, unknown> }, frame: NjFrame, name: string): unknown {
  if (isBlockedName(name)) throw new BlockedError(name);
  const fromFrame = frame.lookup(name);
  if (fromFrame !== undefined) return fromFrame;
  if (Object.hasOwn(context.ctx, name)) return context.ctx[name];
  if (Object.hasOwn(GLOBALS, name)) return GLOBALS[name];
  switch (name) {
    case 'True':
      return true;
    case 'False':
      return false;
    case 'None':
      return null;
    default:
      return undefined;
  }
}

function compareChain(first: unknown, ...rest: unknown[]): boolean {
  let left = plainText(first);
  for (let i = 0; i < rest.length; i += 2) {
    const op = rest[i] as string;
    const right = plainText(rest[i + 1]);
    if (!pyCompare(op, left, right)) return false;
    left = right;
  }
  return true;
}

export const RUNTIME: Record<string, unknown> = {
  ...baseRuntime,
  contextOrFrameLookup: lookupName,
  memberLookup: (obj: unknown, key: unknown) => lookupMember(plainText(obj), key),
  calleeLookup: (obj: unknown, key: unknown) => lookupCallee(plainText(obj), key),
  suppressValue: (value: unknown) => pyStr(plainText(value)),
  ensureDefined: (value: unknown) => value,
  fromIterator: (value: unknown) =>
    value === undefined || value === null ? value : iterate(plainText(value)),
  isArray: (value: unknown) => Array.isArray(value),
  keys: (value: unknown) => (isDict(value) ? pyKeys(value) : []),
  inOperator: (a: unknown, b: unknown) => pyIn(plainText(a), plainText(b)),
  callWrap: (fn: unknown, name: string, context: unknown, args: unknown[]) => {
    if (typeof fn !== 'function') {
      throw new PyError(
        'UndefinedError',
        `'${name.replace(/^.*\["(.*)"\]$/, '$1')}' is undefined or not callable`,
      );
    }
    return (fn as (...a: unknown[]) => unknown).apply(context, args);
  },
  makeMacro: (argNames: string[], kwargNames: string[], func: (...a: unknown[]) => unknown) => {
    const macro = makeMacroBase(argNames, kwargNames, func);
    const named = argNames.length + kwargNames.length;
    const known = new Set([...argNames, ...kwargNames, 'caller']);
    return (...args: unknown[]) => {
      const last = args[args.length - 1] as Record<string, unknown> | undefined;
      const kw = last && typeof last === 'object' && Object.hasOwn(last, '__keywords') ? last : undefined;
      const positional = kw ? args.slice(0, -1) : args;
      const extraKw: Record<string, unknown> = {};
      if (kw)
        for (const [k, v] of Object.entries(kw)) if (k !== '__keywords' && !known.has(k)) extraKw[k] = v;
      MACRO_EXTRAS.push({ varargs: positional.slice(named), kwargs: extraKw, named });
      try {
        return plainText(macro(...positional.slice(0, named), ...(kw ? [kw] : [])));
      } finally {
        MACRO_EXTRAS.pop();
      }
    };
  },
  iterable: (value: unknown) => {
    if (value === null) throw new PyError('TypeError', "'NoneType' object is not iterable");
    return value;
  },
  escapeValue: (value: unknown) =>
    value instanceof SafeString ? String(value) : escapeHtml(plainText(value)),
  requiredBlock: (name: string) => {
    throw new PyError('TemplateRuntimeError', `Required block '${name}' not found`);
  },
  macroExtras: (frame: NjFrame, usesVarargs: boolean, usesKwargs: boolean, name: string) => {
    const extras = MACRO_EXTRAS[MACRO_EXTRAS.length - 1] ?? { varargs: [], kwargs: {}, named: 0 };
    if (!usesVarargs && extras.varargs.length > 0) {
      throw new PyError('TypeError', `macro '${name}' takes not more than ${extras.named} argument(s)`);
    }
    const unknownKw = Object.keys(extras.kwargs);
    if (!usesKwargs && unknownKw.length > 0) {
      throw new PyError('TypeError', `macro '${name}' takes no keyword argument '${unknownKw[0]}'`);
    }
    if (usesVarargs) frame.set('varargs', PyTuple.of2(extras.varargs));
    if (usesKwargs) frame.set('kwargs', extras.kwargs);
  },
  loopState: () => {
    const st = {
      index0: 0,
      last: undefined as unknown,
      cycle: (...items: unknown[]) => {
        if (items.length === 0) throw new PyError('TypeError', 'no items for cycling given');
        return items[st.index0 % items.length];
      },
      changed: (...values: unknown[]) => {
        const now = PyTuple.of2(values);
        if (st.last !== undefined && pyEquals(st.last, now)) return false;
        st.last = now;
        return true;
      },
    };
    return st;
  },
  setAttribute: (target: unknown, key: unknown, value: unknown) => {
    if (!isNamespace(target))
      throw new PyError('TemplateRuntimeError', 'cannot assign attribute on non-namespace object');
    const name = String(key);
    if (isBlockedName(name)) throw new BlockedError(name);
    target[name] = value;
  },
  unpack: (value: unknown, n: number) => {
    const items = iterate(plainText(value));
    if (items.length !== n) {
      throw new PyError(
        'ValueError',
        items.length > n
          ? `too many values to unpack (expected ${n})`
          : `not enough values to unpack (expected ${n}, got ${items.length})`,
      );
    }
    return items;
  },
  truthy: (v: unknown) => pyTruthy(plainText(v)),
  or: (a: unknown, b: () => unknown) => (pyTruthy(plainText(a)) ? a : b()),
  and: (a: unknown, b: () => unknown) => (pyTruthy(plainText(a)) ? b() : a),
  add: (a: unknown, b: unknown) => pyAdd(plainText(a), plainText(b)),
  sub: (a: unknown, b: unknown) => pySub(a, b),
  mul: (a: unknown, b: unknown) => pyMul(plainText(a), plainText(b)),
  div: (a: unknown, b: unknown) => pyDiv(a, b),
  floordiv: (a: unknown, b: unknown) => pyFloorDiv(a, b),
  mod: (a: unknown, b: unknown) => pyMod(plainText(a), b),
  pow: (a: unknown, b: unknown) => pyPow(a, b),
  neg: (a: unknown) => pyNeg(a),
  pos: (a: unknown) => (a instanceof PyFloat ? a : num(a)),
  concat: (a: unknown, b: unknown) => pyStr(plainText(a)) + pyStr(plainText(b)),
  compare: compareChain,
  tuple: (items: unknown[]) => PyTuple.of2(items),
  float: (n: number) => new PyFloat(n),
  dict: (pairs: [string, unknown][]) => makeDict(pairs),
  slice: (start: unknown, stop: unknown, step: unknown) => new PySlice(start, stop, step),
  loopFilter: (arr: unknown, keep: (v: unknown) => boolean) =>
    arr === undefined || arr === null ? arr : iterate(plainText(arr)).filter(keep),
};

// ---------------------------------------------------------------- environment

/** Where `{% include %}`/`{% import %}` find templates: the imports, by name. */
export type TemplateFiles = ReadonlyMap<string, string> | Record<string, string>;

function getFile(files: TemplateFiles, name: string): string | undefined {
  if (files instanceof Map) return files.get(name);
  const record = files as Record<string, string>;
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

const compiledCache = new Map<string, Record<string, RootFn>>();
const MAX_CACHE = 500;

function cachedCompile(src: string, name: string): Record<string, RootFn> {
  const key = `${name}\u0000${src}`;
  let props = compiledCache.get(key);
  if (!props) {
    props = compileTemplate(src, name);
    if (compiledCache.size >= MAX_CACHE) compiledCache.clear();
    compiledCache.set(key, props);
  }
  return props;
}

/** A nunjucks Environment configured as Jinja2's defaults, with templates from `files`. */
function makeEnvironment(files: TemplateFiles): NjEnvironment {
  const env = newEnvironment({ autoescape: false, throwOnUndefined: false, dev: true });
  const filters: Record<string, unknown> = Object.create(null);
  Object.assign(filters, FILTERS);
  const tests: Record<string, unknown> = Object.create(null);
  Object.assign(tests, TESTS);
  env.getFilter = (name: string) => {
    if (!Object.hasOwn(filters, name)) throw new PyError('TemplateRuntimeError', `No filter named '${name}'`);
    return filters[name];
  };
  env.getTest = (name: string) => {
    if (!Object.hasOwn(tests, name)) throw new PyError('TemplateRuntimeError', `No test named '${name}'`);
    return tests[name];
  };
  const templates = new Map<string, NjTemplate>();
  env.getTemplate = (
    name: unknown,
    _eager: unknown,
    _parent: unknown,
    ignoreMissing: unknown,
    cb?: (err: unknown, tmpl?: unknown) => void,
  ) => {
    let template: NjTemplate | undefined;
    let error: unknown;
    try {
      const key = String(name);
      template = templates.get(key);
      if (!template) {
        const src = getFile(files, key);
        if (src === undefined) {
          if (ignoreMissing) {
            template = templateFromCode(cachedCompile('', key), env, key);
          } else {
            throw new PyError('TemplateNotFound', `template '${key}' is not among the imports`);
          }
        } else {
          template = templateFromCode(cachedCompile(src, key), env, key);
        }
        templates.set(key, template);
      }
    } catch (e) {
      error = e;
    }
    if (cb) {
      cb(error ?? null, template);
      return undefined;
    }
    if (error) throw error;
    return template;
  };
  return env;
}

export interface RenderJinjaOptions {
  /** The template's name, used in errors and for relative includes. */
  name: string;
  /** Files `{% include %}` and `{% import %}` can reach, by import name. */
  files?: TemplateFiles;
  /** Identifies `files` across calls (same key, same files): environments are then reused. */
  filesKey?: string | number;
}

const templates = new WeakMap<NjEnvironment, Map<Record<string, RootFn>, NjTemplate>>();

function templateFor(env: NjEnvironment, props: Record<string, RootFn>, name: string): NjTemplate {
  let byProps = templates.get(env);
  if (!byProps) {
    byProps = new Map();
    templates.set(env, byProps);
  }
  let template = byProps.get(props);
  if (!template) {
    if (byProps.size > 256) byProps.clear();
    template = templateFromCode(props, env, name);
    byProps.set(props, template);
  }
  return template;
}

const environments = new Map<string | number, NjEnvironment>();

function environmentFor(files: TemplateFiles, key: string | number | undefined): NjEnvironment {
  if (key === undefined) return makeEnvironment(files);
  let env = environments.get(key);
  if (!env) {
    if (environments.size >= 64) environments.clear();
    env = makeEnvironment(files);
    environments.set(key, env);
  }
  return env;
}

/**
 * Empties the compiled templates and the environments kept across renderings: a rendering
 * process's warm-up (sandbox/renderer-warm-up.ts) leaves nothing a request could find.
 */
export function clearTemplateCaches(): void {
  compiledCache.clear();
  environments.clear();
}

/** A render failure with the template line where it happened. */
export class JinjaRenderError extends Error {
  constructor(
    message: string,
    readonly lineno: number | undefined,
    readonly kind: 'compile' | 'runtime' | 'blocked' | 'limit',
  ) {
    super(message);
    this.name = 'JinjaRenderError';
  }
}

function lineOf(error: unknown): number | undefined {
  const e = error as { lineno?: unknown; message?: unknown };
  // Runtime errors carry nunjucks' 0-based line of the last expression evaluated.
  if (typeof e.lineno === 'number') return e.lineno + 1;
  return undefined;
}

function cleanMessage(error: unknown): string {
  const e = error as { message?: unknown };
  return String(e.message ?? error)
    .replace(/\([^)]*\)\s*\[Line \d+, Column \d+\]\s*/g, '')
    .replace(/^\([^)]*\)\s*/, '')
    .replace(/^(Template render error: )?/, '')
    .replace(/^((Error|TypeError|RangeError|PyError): )+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function rootCause(error: unknown): unknown {
  let e = error as { cause?: unknown } | undefined;
  for (let i = 0; i < 10 && e && typeof e === 'object' && e.cause; i++) e = e.cause as { cause?: unknown };
  return e;
}

/**
 * Renders one Jinja template to text, as Jinja2 would. Throws JinjaRenderError naming the line;
 * kind `blocked` for a sandbox escape attempt, `limit` for a recursion bomb.
 */
export function renderJinja(
  src: string,
  context: Record<string, unknown>,
  options: RenderJinjaOptions,
): string {
  const files = options.files ?? {};
  let props: Record<string, RootFn>;
  try {
    props = cachedCompile(src, options.name);
  } catch (error) {
    if (error instanceof JinjaCompileError) {
      const blocked = /access to '[^']+' is blocked|cannot set '/.test(error.message);
      throw new JinjaRenderError(error.message, error.lineno, blocked ? 'blocked' : 'compile');
    }
    throw error;
  }
  const env = environmentFor(files, options.filesKey);
  const template = templateFor(env, props, options.name);
  const ctx: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(context)) if (!isBlockedName(k)) ctx[k] = v;
  try {
    return template.render(ctx);
  } catch (error) {
    const cause = rootCause(error);
    const text = `${String((error as Error).message ?? '')} ${String((cause as Error)?.message ?? '')}`;
    const line = lineOf(error);
    if (cause instanceof BlockedError || /access to '[^']+' is blocked/.test(text)) {
      const what = /access to '([^']+)'/.exec(text)?.[1] ?? 'a host object';
      throw new JinjaRenderError(`access to '${what}' is blocked in templates`, line, 'blocked');
    }
    if (/Invalid (string|array|typed array) length/.test(text)) {
      throw new JinjaRenderError('ran out of memory (a string or list too large)', line, 'limit');
    }
    if (cause instanceof RangeError || /Maximum call stack size exceeded/.test(text)) {
      throw new JinjaRenderError('recursion limit exceeded (maximum call stack size)', line, 'limit');
    }
    throw new JinjaRenderError(cleanMessage(error), line, 'runtime');
  }
}
