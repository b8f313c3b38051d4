/**
 * What blueprint executions add to the expansion engine's Jinja (docs/blueprints.md "Templates"): the
 * filters `toyaml`, `fromyaml`, `nindent`, `sindent`, `b64enc`, `b64dec`, the globals
 * `getResource` and `getResourceKey`, and strict undefined (Go's `<no value>` check). Installed
 * only in the blueprint rendering process (sandbox-child.ts), never in dm's own process, so the
 * expansion engine's behaviour elsewhere is untouched.
 */
import { dump } from 'js-yaml';
import { parseYaml } from '../document/yaml.js';
import { RUNTIME } from '../expand/jinja/compat.js';
import { FILTERS } from '../expand/jinja/filters.js';
import { isDict, PyError, pyStr, toPlain } from '../expand/jinja/python-values.js';

/** Set when a template function (getResource…) failed: the error's phase is then `template`. */
export let templateFunctionFailed = false;
/** The value captured by the `__dm_capture` filter (native results of data mappings). */
export let captured: unknown;

export function resetRenderState(): void {
  templateFunctionFailed = false;
  captured = undefined;
  lastMissing = undefined;
}

let lastMissing: string | undefined;

function typeLabel(obj: unknown): string {
  if (isDict(obj)) return 'dict object';
  if (Array.isArray(obj)) return 'list object';
  if (typeof obj === 'string') return 'str object';
  return `${typeof obj} object`;
}

function undefinedError(): PyError {
  return new PyError('UndefinedError', lastMissing ?? 'undefined value');
}

function strict(value: unknown): unknown {
  if (value === undefined) throw undefinedError();
  return value;
}

/** Go-template style YAML of a value: sorted keys, no trailing newline. */
export function toYamlText(value: unknown): string {
  const text = dump(toPlain(value), { sortKeys: true, noRefs: true, lineWidth: -1 });
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

function indentLines(text: string, n: number): string {
  const pad = ' '.repeat(n);
  return pad + text.split('\n').join(`\n${pad}`);
}

function failFunction(name: string, message: string): never {
  templateFunctionFailed = true;
  throw new PyError('TemplateFunctionError', `${name}: ${message}`);
}

interface Resource {
  name?: unknown;
  [k: string]: unknown;
}

function componentOf(cd: unknown): Record<string, unknown> {
  const c = isDict(cd) ? cd.component : undefined;
  return isDict(c) ? c : {};
}

/** `getResource(cd, key, value, …)`: the first resource of `cd` matching every key/value pair. */
export function getResource(cd: unknown, ...pairs: unknown[]): unknown {
  if (!isDict(cd)) failFunction('getResource', 'the first argument must be a component descriptor');
  if (pairs.length === 0 || pairs.length % 2 !== 0) {
    failFunction('getResource', 'expects key/value pairs after the component descriptor');
  }
  const resources = componentOf(cd).resources;
  const list = Array.isArray(resources) ? (resources as Resource[]) : [];
  const found = list.find((r) => {
    for (let i = 0; i < pairs.length; i += 2) {
      const key = pyStr(pairs[i]);
      const want = pyStr(pairs[i + 1]);
      const have = key in r ? r[key] : isDict(r.extraIdentity) ? r.extraIdentity[key] : undefined;
      if (have === undefined || pyStr(have) !== want) return false;
    }
    return true;
  });
  if (!found) {
    const selector = [];
    for (let i = 0; i < pairs.length; i += 2) selector.push(`${pyStr(pairs[i])}=${pyStr(pairs[i + 1])}`);
    failFunction('getResource', `no resource with ${selector.join(', ')} in the component descriptor`);
  }
  return found;
}

/**
 * `getResourceKey("cd://[componentReferences/<r>/…]resources/<name>")`: base64 of the YAML
 * `{component: {name, version}, resource: {name}}` naming the resource.
 */
export function makeGetResourceKey(cd: unknown): (ref: unknown) => string {
  return (ref: unknown) => {
    const text = pyStr(ref);
    const m = /^cd:\/\/((?:componentReferences\/[^/]+\/)*)resources\/([^/]+)$/.exec(text);
    if (!m) failFunction('getResourceKey', `'${text}' is not a cd:// resource reference`);
    let component = componentOf(cd);
    let name = component.name;
    let version = component.version;
    for (const refName of (m[1] ?? '').split('/').filter((s, i) => i % 2 === 1 && s)) {
      const refs = Array.isArray(component.componentReferences) ? component.componentReferences : [];
      const entry = refs.find((r) => isDict(r) && r.name === refName) as Record<string, unknown> | undefined;
      if (!entry) failFunction('getResourceKey', `no component reference '${refName}' in '${text}'`);
      name = entry.componentName;
      version = entry.version;
      component = { name, version };
    }
    const resourceName = m[2];
    if (component === componentOf(cd)) {
      const resources = Array.isArray(component.resources) ? component.resources : [];
      if (!resources.some((r) => isDict(r) && r.name === resourceName)) {
        failFunction('getResourceKey', `no resource '${resourceName}' in the component descriptor`);
      }
    }
    const yaml = dump({ component: { name, version }, resource: { name: resourceName } }, { lineWidth: -1 });
    return Buffer.from(yaml, 'utf8').toString('base64');
  };
}

let installed = false;

/** Adds the blueprint filters and strict undefined to this process's Jinja runtime. */
export function installBlueprintJinja(): void {
  if (installed) return;
  installed = true;
  Object.assign(FILTERS, {
    toyaml: (v: unknown) => toYamlText(strict(v)),
    fromyaml: (v: unknown) => {
      try {
        return parseYaml(pyStr(strict(v)));
      } catch (error) {
        return failFunction('fromyaml', (error as Error).message);
      }
    },
    nindent: (v: unknown, n: unknown) => `\n${indentLines(pyStr(strict(v)), Number(n ?? 0))}`,
    sindent: (v: unknown, n: unknown) => indentLines(pyStr(strict(v)), Number(n ?? 0)),
    b64enc: (v: unknown) => Buffer.from(pyStr(strict(v)), 'utf8').toString('base64'),
    b64dec: (v: unknown) => {
      const s = pyStr(strict(v));
      if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s.trim())) failFunction('b64dec', `'${s}' is not base64`);
      return Buffer.from(s, 'base64').toString('utf8');
    },
    __dm_capture: (v: unknown) => {
      captured = toPlain(strict(v));
      return '';
    },
  });
  const r = RUNTIME as Record<string, (...args: unknown[]) => unknown>;
  const memberLookup = r.memberLookup!;
  const nameLookup = r.contextOrFrameLookup!;
  r.memberLookup = (obj: unknown, key: unknown) => {
    const value = memberLookup(obj, key);
    if (value === undefined && obj !== undefined) {
      lastMissing = `'${typeLabel(obj)}' has no attribute '${pyStr(key)}'`;
    }
    return value;
  };
  r.contextOrFrameLookup = (context: unknown, frame: unknown, name: unknown) => {
    const value = nameLookup(context, frame, name);
    if (value === undefined) lastMissing = `'${pyStr(name)}' is undefined`;
    return value;
  };
  for (const fn of ['suppressValue', 'truthy', 'fromIterator']) {
    const original = r[fn]!;
    r[fn] = (value: unknown, ...rest: unknown[]) => original(strict(value), ...rest);
  }
  for (const fn of ['concat', 'add', 'compare']) {
    const original = r[fn]!;
    r[fn] = (...args: unknown[]) => original(...args.map((a) => strict(a)));
  }
  for (const fn of ['or', 'and']) {
    const original = r[fn]!;
    r[fn] = (a: unknown, b: unknown) => original(strict(a), b);
  }
}
