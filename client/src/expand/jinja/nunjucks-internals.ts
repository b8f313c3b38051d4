/**
 * The one place that touches nunjucks' internals (nunjucks 3.2.4, pinned in package.json). The
 * Jinja2 compatibility layer (compat.ts) adjusts nunjucks' parser and code generator per
 * instance and replaces runtime helpers that the generated code calls by name; none of that is
 * public API. Every private name used is listed here, typed, and checked when this module loads:
 * a nunjucks upgrade that renames or removes one fails here, loudly, naming it (and the test
 * nunjucks-internals.test.ts fails), instead of silently rendering differently.
 */
import nunjucksModule from 'nunjucks';
import nunjucksPackage from 'nunjucks/package.json' with { type: 'json' };
import transformerModuleRaw from 'nunjucks/src/transformer.js';

/** The nunjucks version the compatibility layer was written and tested against. */
export const NUNJUCKS_VERSION = '3.2.4';

// nunjucks' internals have no type declarations; these are the shapes used by compat.ts.
export interface NjNode {
  typename: string;
  lineno: number;
  colno: number;
  children: NjNode[];
  [field: string]: unknown;
}
export type NjNodeClass = new (lineno: number, colno: number, ...fields: unknown[]) => NjNode;
export interface NjFrame {
  push(isolateWrites?: boolean): NjFrame;
  set(name: string, value: unknown, resolveUp?: boolean): void;
  lookup(name: string): unknown;
  variables: Record<string, unknown>;
  parent: NjFrame | null;
}
export interface NjToken {
  type: string;
  value: string;
  lineno: number;
  colno: number;
}
export interface NjCompiler {
  /** The name of the variable the current output is appended to. */
  buffer: string;
  /** Starts appending output to a new variable (declared at once), whose name it returns. */
  _pushBuffer(): string;
  _popBuffer(): void;
  _emitLines(...lines: string[]): void;
  codebuf: string[];
  _emit(code: string): void;
  _emitLine(code: string): void;
  _tmpid(): string;
  _getNodeName(node: NjNode): string;
  compile(node: NjNode, frame: NjFrame): void;
  _compileExpression(node: NjNode, frame: NjFrame): void;
  _compileAggregate(node: NjNode, frame: NjFrame, start: string, end: string): void;
  /** Compiles a macro's function (in `frame`'s scope when given); returns its variable's name. */
  _compileMacro(node: NjNode, frame?: NjFrame): string;
  fail(message: string, lineno?: number, colno?: number): never;
  getCode(): string;
}
/** nunjucks' lexer (a Tokenizer): tokens one at a time, and the position in the source. */
export interface NjTokenizer {
  index: number;
  lineno: number;
  colno: number;
  str: string;
  in_code: boolean;
  nextToken(): NjToken | null;
  _extractRegex(regex: RegExp): RegExpMatchArray | null;
}
export interface NjParser {
  tokens: NjTokenizer;
  dropLeadingWhitespace: boolean;
  peeked: NjToken | false | null;
  extensions: unknown[];
  peekToken(): NjToken;
  nextToken(withWhitespace?: boolean): NjToken;
  pushToken(tok: NjToken): void;
  skip(type: string): boolean;
  skipValue(type: string, value: string): boolean;
  skipSymbol(name: string): boolean;
  expect(type: string): NjToken;
  parseExpression(): NjNode;
  parsePrimary(noPostfix?: boolean): NjNode;
  parseSignature(tolerant?: boolean, noParens?: boolean): NjNode;
  parseFilterName(): NjNode;
  parseFilterArgs(name: NjNode): NjNode[];
  parseUntilBlocks(...names: string[]): NjNode;
  advanceAfterBlockEnd(name?: string): NjToken;
  fail(message: string, lineno?: number, colno?: number): never;
  parseAsRoot(): NjNode;
}
export interface NjTemplate {
  render(ctx: Record<string, unknown>): string;
}
export interface NjEnvironment {
  opts: Record<string, unknown>;
  globals: Record<string, unknown>;
  filters: Record<string, unknown>;
  tests: Record<string, unknown>;
  getFilter(name: string): unknown;
  getTest(name: string): unknown;
  getTemplate(...args: unknown[]): unknown;
}
interface NjModule {
  Environment: new (loaders?: unknown, opts?: Record<string, unknown>) => NjEnvironment;
  Template: new (src: unknown, env: NjEnvironment, path: string, eagerCompile?: boolean) => NjTemplate;
  compiler: { Compiler: new (name: string, throwOnUndefined: boolean) => NjCompiler };
  parser: { Parser: new (tokens: unknown) => NjParser };
  lexer: { lex(src: string, opts?: unknown): unknown; [token: string]: unknown };
  nodes: Record<string, unknown> & { Node: { extend(name: string, props: unknown): NjNodeClass } };
  runtime: Record<string, unknown> & { SafeString: new (s: string) => object };
}

/** Parser methods the compatibility layer overrides (each receives the original as `base`). */
export const PARSER_OVERRIDABLE = [
  'parsePrimary',
  'parseStatement',
  'parseIs',
  'parseAggregate',
  'parseFor',
  'parseMacro',
  'parseSet',
  'parsePostfix',
  'parseNodes',
  'parseUntilBlocks',
  'advanceAfterBlockEnd',
  'parseRaw',
  'parseBlock',
  'parseFilterStatement',
] as const;
/** Other parser methods it calls. */
const PARSER_USED = [
  'peekToken',
  'nextToken',
  'pushToken',
  'skip',
  'skipValue',
  'skipSymbol',
  'expect',
  'parseExpression',
  'parseCompare',
  'parseSignature',
  'parseFilterName',
  'parseFilterArgs',
  'parseUntilBlocks',
  'advanceAfterBlockEnd',
  'fail',
  'parseAsRoot',
] as const;
/** Compiler methods it overrides; `compileDm…` methods for its own node types are added freely. */
export const COMPILER_OVERRIDABLE = [
  'assertType',
  'compileLookupVal',
  'compileSymbol',
  'compileFunCall',
  'compileArray',
  'compileGroup',
  'compileDict',
  'compileLiteral',
  'compileIf',
  'compileInlineIf',
  'compileNot',
  'compileOr',
  'compileAnd',
  'compileAdd',
  'compileSub',
  'compileMul',
  'compileDiv',
  'compileFloorDiv',
  'compileMod',
  'compilePow',
  'compileConcat',
  'compileIn',
  'compileNeg',
  'compilePos',
  'compileCompare',
  'compileFilter',
  'compileIs',
  'compileFor',
  'compileMacro',
  'compileSet',
  'compileOutput',
  'compileExtends',
  '_emitLoopBindings',
] as const;
const COMPILER_USED = [
  '_compileMacro',
  '_pushBuffer',
  '_popBuffer',
  '_emitLines',
  '_emit',
  '_emitLine',
  '_tmpid',
  '_getNodeName',
  'compile',
  '_compileExpression',
  '_compileAggregate',
  'fail',
  'getCode',
] as const;
/**
 * Runtime helpers that nunjucks' generated code calls by name and that compat.ts replaces
 * (its RUNTIME object): if nunjucks stopped calling one, the replacement would silently not apply.
 */
export const RUNTIME_REPLACED = [
  'contextOrFrameLookup',
  'memberLookup',
  'suppressValue',
  'ensureDefined',
  'fromIterator',
  'isArray',
  'keys',
  'inOperator',
  'callWrap',
  'makeMacro',
] as const;
/** Lexer token names used. */
export const TOKENS = [
  'TOKEN_FLOAT',
  'TOKEN_INT',
  'TOKEN_STRING',
  'TOKEN_SYMBOL',
  'TOKEN_BOOLEAN',
  'TOKEN_NONE',
  'TOKEN_OPERATOR',
  'TOKEN_COMMA',
  'TOKEN_COLON',
  'TOKEN_BLOCK_START',
  'TOKEN_BLOCK_END',
  'TOKEN_VARIABLE_END',
  'TOKEN_LEFT_PAREN',
  'TOKEN_RIGHT_PAREN',
  'TOKEN_LEFT_BRACKET',
  'TOKEN_RIGHT_BRACKET',
  'TOKEN_LEFT_CURLY',
  'TOKEN_RIGHT_CURLY',
  'TOKEN_DATA',
  'TOKEN_WHITESPACE',
  'TOKEN_PIPE',
] as const;
/** Node classes used. */
export const NODE_TYPES = [
  'Node',
  'NodeList',
  'Symbol',
  'Literal',
  'FunCall',
  'Is',
  'Not',
  'Pair',
  'Array',
  'Group',
  'Dict',
  'KeywordArgs',
  'TemplateData',
  'Output',
  'Block',
  'Filter',
  'Set',
  'Capture',
  'LookupVal',
] as const;

export type ParserMethod = (typeof PARSER_OVERRIDABLE)[number];
export type CompilerMethod = (typeof COMPILER_OVERRIDABLE)[number];
export type TokenName = (typeof TOKENS)[number];
export type NodeType = (typeof NODE_TYPES)[number];
type Base = (...args: unknown[]) => unknown;

/**
 * Checks that `mod` has every internal this layer relies on; returns the problems (empty when
 * it fits). Exported for the test, which also runs it against a doctored copy.
 */
export function checkInternals(mod: unknown, transformer: unknown): string[] {
  const problems: string[] = [];
  const m = mod as Partial<NjModule> | undefined;
  const fn = (owner: unknown, name: string) =>
    typeof (owner as Record<string, unknown> | undefined)?.[name] === 'function';
  const parserProto = m?.parser?.Parser?.prototype;
  for (const name of [...PARSER_OVERRIDABLE, ...PARSER_USED]) {
    if (!fn(parserProto, name)) problems.push(`Parser.prototype.${name}`);
  }
  const compilerProto = m?.compiler?.Compiler?.prototype;
  for (const name of [...COMPILER_OVERRIDABLE, ...COMPILER_USED]) {
    if (!fn(compilerProto, name)) problems.push(`Compiler.prototype.${name}`);
  }
  for (const name of [...RUNTIME_REPLACED, 'SafeString']) {
    if (!fn(m?.runtime, name)) problems.push(`runtime.${name}`);
  }
  for (const name of TOKENS) {
    if (typeof (m?.lexer as Record<string, unknown> | undefined)?.[name] !== 'string')
      problems.push(`lexer.${name}`);
  }
  if (!fn(m?.lexer, 'lex')) problems.push('lexer.lex');
  else {
    const tokenizer = (m!.lexer as { lex(src: string): unknown }).lex('');
    for (const name of ['nextToken', '_extractRegex']) {
      if (!fn(tokenizer, name)) problems.push(`Tokenizer.prototype.${name}`);
    }
  }
  for (const name of NODE_TYPES) if (!fn(m?.nodes, name)) problems.push(`nodes.${name}`);
  if (!fn(m?.nodes?.Node, 'extend')) problems.push('nodes.Node.extend');
  if (!fn(m, 'Environment')) problems.push('Environment');
  if (!fn(m, 'Template')) problems.push('Template');
  if (!fn(transformer, 'transform')) problems.push('transformer.transform');
  return problems;
}

// Imported statically (not required), so that a bundle of the renderer holds them
// (docs/client.md, "The CLI bundle").
const nunjucks = nunjucksModule as unknown as NjModule;
const transformerModule = transformerModuleRaw as unknown as {
  transform(ast: NjNode, asyncFilters: unknown[], name: string): NjNode;
};
const installedVersion = (nunjucksPackage as { version: string }).version;
{
  const problems = checkInternals(nunjucks, transformerModule);
  if (installedVersion !== NUNJUCKS_VERSION || problems.length > 0) {
    throw new Error(
      `the Jinja compatibility layer needs nunjucks ${NUNJUCKS_VERSION}; the installed nunjucks ${installedVersion}` +
        (problems.length > 0 ? ` lacks ${problems.join(', ')}` : ' is a different version') +
        ' (client/src/expand/jinja/nunjucks-internals.ts)',
    );
  }
}

/** The 1-based line where the last token of `src` starts (where Jinja2 reports an end of template). */
export function lastTokenLine(src: string): number {
  const tokens = nunjucks.lexer.lex(src, {}) as { nextToken(): NjToken | null };
  let line = 0;
  for (let tok = tokens.nextToken(); tok; tok = tokens.nextToken()) line = tok.lineno;
  return line + 1;
}

/** A lexer token type, e.g. token('TOKEN_FLOAT'). */
export function token(name: TokenName): string {
  return nunjucks.lexer[name] as string;
}

/** A nunjucks node class. */
export function nodeClass(name: Exclude<NodeType, 'Node'>): NjNodeClass {
  return nunjucks.nodes[name] as NjNodeClass;
}

/** A new node type with the given fields; the compiler dispatches it to `compile<Name>`. */
export function defineNode(name: `Dm${string}`, fields: string[]): NjNodeClass {
  return nunjucks.nodes.Node.extend(name, { fields });
}

export type ParserOverrides = {
  [K in ParserMethod]?: (this: NjParser, base: Base, ...args: unknown[]) => unknown;
};

/**
 * A parser over `src` (lexed with `lexOptions`) with per-instance overrides; `tokens`, when given,
 * replaces the lexer's `nextToken` on this instance (it receives the lexer's own).
 */
export function newParser(
  src: string,
  overrides: ParserOverrides,
  lexOptions: object = {},
  tokens?: (tokenizer: NjTokenizer, base: () => NjToken | null) => () => NjToken | null,
): NjParser {
  const tokenizer = nunjucks.lexer.lex(src, lexOptions) as NjTokenizer;
  if (tokens) {
    const base = tokenizer.nextToken.bind(tokenizer);
    tokenizer.nextToken = tokens(tokenizer, base);
  }
  const parser = new nunjucks.parser.Parser(tokenizer);
  parser.extensions = [];
  const proto = nunjucks.parser.Parser.prototype as unknown as Record<string, Base>;
  const target = parser as unknown as Record<string, unknown>;
  for (const [name, override] of Object.entries(overrides)) {
    const base = proto[name]!;
    target[name] = function (this: NjParser, ...args: unknown[]) {
      return (override as (this: NjParser, b: Base, ...a: unknown[]) => unknown).call(
        this,
        (...a: unknown[]) => base.apply(this, a),
        ...args,
      );
    };
  }
  return parser;
}

/** A code generation method: `base` is nunjucks' own (for `compileDm…` methods it throws). */
export type CompileFn = (
  this: NjCompiler,
  base: Base,
  node: NjNode,
  frame: NjFrame,
  ...rest: unknown[]
) => unknown;
export type CompilerOverrides = { [K in CompilerMethod]?: CompileFn } & {
  [K in `compileDm${string}`]?: CompileFn;
};

/** A compiler with per-instance overrides (and handlers for the layer's own node types). */
export function newCompiler(name: string, overrides: CompilerOverrides): NjCompiler {
  const compiler = new nunjucks.compiler.Compiler(name, false);
  const proto = nunjucks.compiler.Compiler.prototype as unknown as Record<string, Base | undefined>;
  const target = compiler as unknown as Record<string, unknown>;
  const missing: Base = () => {
    throw new Error('no nunjucks base method');
  };
  for (const [method, override] of Object.entries(overrides)) {
    const base = proto[method] ?? missing;
    target[method] = function (this: NjCompiler, ...args: unknown[]) {
      return (override as (this: NjCompiler, b: Base, ...a: unknown[]) => unknown).call(
        this,
        (...a: unknown[]) => base.apply(this, a),
        ...args,
      );
    };
  }
  return compiler;
}

/** nunjucks' transformer pass (turns async filters and `caller` blocks into plain nodes). */
export function transform(ast: NjNode, name: string): NjNode {
  return transformerModule.transform(ast, [], name);
}

/** nunjucks' runtime helpers (the generated code's `runtime`), to extend. */
export const baseRuntime: Readonly<Record<string, unknown>> = nunjucks.runtime;
export const SafeString = nunjucks.runtime.SafeString;
export const makeMacroBase = nunjucks.runtime.makeMacro as (
  argNames: unknown,
  kwargNames: unknown,
  func: (...a: unknown[]) => unknown,
) => (...a: unknown[]) => unknown;

/** A nunjucks Environment. */
export function newEnvironment(opts: Record<string, unknown>): NjEnvironment {
  return new nunjucks.Environment([], opts);
}

/** A Template from already compiled functions (nunjucks' `{type: 'code'}` form). */
export function templateFromCode(obj: object, env: NjEnvironment, path: string): NjTemplate {
  return new nunjucks.Template({ type: 'code', obj }, env, path, true);
}
