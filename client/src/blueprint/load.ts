/**
 * Inputs of `dm blueprint render|apply`: the blueprint directory (its filesystem) and the imports
 * file (docs/blueprints.md "Commands": installation, scope, componentDescriptor,
 * blueprints, deployerExports).
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';
import { readTextFile } from '../input.js';
import type { BlueprintInputs, BlueprintSource, Files } from './engine.js';

const MAX_FILES = 1000;
const MAX_BYTES = 16 * 1024 * 1024;

/** The files of a blueprint directory, by path relative to it (`/` separators, bounded). */
export function readBlueprintDir(dir: string): Files {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dir);
  } catch {
    throw new DmError('NOT_FOUND', `blueprint directory ${dir} does not exist`, { category: 'not-found' });
  }
  if (!st.isDirectory())
    throw new DmError('NOT_A_DIRECTORY', `${dir} is not a directory`, { category: 'usage' });
  const files: Files = {};
  let bytes = 0;
  let count = 0;
  const walk = (d: string, depth: number) => {
    if (depth > 8) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.isFile()) {
        const size = statSync(full).size;
        if (++count > MAX_FILES || bytes + size > MAX_BYTES) {
          throw new DmError(
            'BLUEPRINT_TOO_LARGE',
            `${dir}: more than ${MAX_FILES} files or ${MAX_BYTES} bytes`,
            {
              category: 'limit',
            },
          );
        }
        bytes += size;
        files[relative(dir, full).split('\\').join('/')] = readFileSync(full, 'utf8');
      }
    }
  };
  walk(dir, 0);
  if (files['blueprint.yaml'] === undefined) {
    throw new DmError('NOT_A_BLUEPRINT', `${dir} has no blueprint.yaml`, { category: 'invalid-input' });
  }
  return files;
}

function filesOf(value: unknown, where: string): Files {
  if (!isMapping(value))
    throw new DmError('INVALID_IMPORTS', `${where} must be a mapping of path to content`, {
      category: 'invalid-input',
    });
  const out: Files = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') {
      throw new DmError('INVALID_IMPORTS', `${where}.${k} must be the file's text`, {
        category: 'invalid-input',
      });
    }
    out[k.replace(/^\/+/, '')] = v;
  }
  return out;
}

/** The imports file as BlueprintInputs; also returns the root `blueprint` files when present. */
export function inputsFromDocument(
  doc: unknown,
  source: string,
): { inputs: BlueprintInputs; blueprint?: Files } {
  if (!isMapping(doc)) {
    throw new DmError('INVALID_IMPORTS', `${source}: the imports file must be a YAML mapping`, {
      category: 'invalid-input',
    });
  }
  if (doc.installation !== undefined && !isMapping(doc.installation)) {
    throw new DmError('INVALID_IMPORTS', `${source}: installation must be a mapping`, {
      category: 'invalid-input',
    });
  }
  const inputs: BlueprintInputs = { installation: (doc.installation as Record<string, unknown>) ?? {} };
  if (isMapping(doc.scope)) inputs.scope = doc.scope as BlueprintInputs['scope'];
  if (doc.componentDescriptor !== undefined) inputs.componentDescriptor = doc.componentDescriptor;
  if (isMapping(doc.deployerExports))
    inputs.deployerExports = doc.deployerExports as BlueprintInputs['deployerExports'];
  if (isMapping(doc.jsonSchemas)) inputs.jsonSchemas = doc.jsonSchemas;
  if (isMapping(doc.blueprints)) {
    const blueprints: Record<string, BlueprintSource> = {};
    for (const [ref, entry] of Object.entries(doc.blueprints)) {
      if (!isMapping(entry)) {
        throw new DmError(
          'INVALID_IMPORTS',
          `${source}: blueprints.${ref} must be {files, componentDescriptor?}`,
          {
            category: 'invalid-input',
          },
        );
      }
      const b: BlueprintSource = { files: filesOf(entry.files, `${source}: blueprints.${ref}.files`) };
      if (entry.componentDescriptor !== undefined) b.componentDescriptor = entry.componentDescriptor;
      blueprints[ref] = b;
    }
    inputs.blueprints = blueprints;
  }
  const result: { inputs: BlueprintInputs; blueprint?: Files } = { inputs };
  if (doc.blueprint !== undefined) result.blueprint = filesOf(doc.blueprint, `${source}: blueprint`);
  return result;
}

/** Reads and parses the imports file. */
export function readImportsFile(path: string): { inputs: BlueprintInputs; blueprint?: Files } {
  return inputsFromDocument(parseYaml(readTextFile(path), { source: path }), path);
}
