/**
 * `dm template render` (docs/expansion.md): the raw text one template renders to, with no expansion
 * and no YAML parsing, so that anyone can compare dm with Jinja2 byte for byte. The context
 * file's top-level keys become the template's globals.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { isMapping } from '../data.js';
import { formatYaml, parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { readTextFile } from '../input.js';
import { templateKindOf } from './local-template-source.js';
import { RenderSandbox, type SandboxOptions } from './sandbox/render-sandbox.js';

export interface RenderTemplateOptions {
  /** A YAML file whose top-level keys become globals (`properties`, `env`, `imports` …). */
  contextFile?: string;
  /** Merged over `properties` of the context. */
  properties?: Record<string, unknown>;
  /** Merged over `env` of the context. */
  env?: Record<string, unknown>;
  /** Where includes and Python imports are found, besides the template's own directory. */
  importsDir?: string;
  sandbox?: SandboxOptions;
}

export interface RenderedTemplate {
  template: string;
  text: string;
}

const MAX_FILES = 500;
const MAX_BYTES = 8 * 1024 * 1024;

/** Text files under `dir`, by path relative to it (bounded). */
function filesUnder(dir: string, into: Record<string, string>): void {
  let bytes = 0;
  const walk = (d: string, depth: number) => {
    if (depth > 4) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (
        Object.keys(into).length >= MAX_FILES ||
        entry.name.startsWith('.') ||
        entry.name === 'node_modules'
      )
        continue;
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.isFile()) {
        const size = statSync(full).size;
        if (bytes + size > MAX_BYTES) continue;
        bytes += size;
        const name = relative(dir, full).split('\\').join('/');
        into[name] ??= readFileSync(full, 'utf8');
      }
    }
  };
  walk(dir, 0);
}

export async function renderTemplateFile(
  path: string,
  options: RenderTemplateOptions = {},
): Promise<RenderedTemplate> {
  const kind = templateKindOf(path) ?? 'jinja';
  const source = readTextFile(path);
  let context: Record<string, unknown> = {};
  if (options.contextFile) {
    const text = readTextFile(options.contextFile);
    const doc = parseYaml(text, { source: options.contextFile, dialect: 'pyyaml' });
    if (doc !== null && !isMapping(doc)) {
      throw new DmError('INVALID_CONTEXT', `${options.contextFile}: the context must be a YAML mapping`, {
        category: 'invalid-input',
      });
    }
    context = (doc as Record<string, unknown> | null) ?? {};
  }
  if (options.properties && Object.keys(options.properties).length) {
    context.properties = {
      ...(isMapping(context.properties) ? context.properties : {}),
      ...options.properties,
    };
  }
  if (options.env && Object.keys(options.env).length) {
    context.env = { ...(isMapping(context.env) ? context.env : {}), ...options.env };
  }
  const files: Record<string, string> = {};
  if (isMapping(context.imports)) {
    for (const [k, v] of Object.entries(context.imports)) if (typeof v === 'string') files[k] = v;
  }
  if (options.importsDir) filesUnder(options.importsDir, files);
  filesUnder(dirname(path), files);
  const name = basename(path);
  const sandbox = new RenderSandbox(options.sandbox ?? {});
  try {
    if (kind === 'python') {
      const result = await sandbox.renderPython({
        name,
        source,
        context: {
          properties: context.properties ?? {},
          env: context.env ?? {},
          imports: context.imports ?? files,
        },
        files,
        // A file of the user's (docs/expansion.md, "Isolation").
        ownFile: true,
      });
      return { template: path, text: 'text' in result ? result.text : formatYaml(result.data) };
    }
    const text = await sandbox.renderJinja({ name, source, context, files });
    return { template: path, text };
  } finally {
    sandbox.close();
  }
}
