/**
 * A registry directory of many one-version templates and one template of many versions, for the
 * paged reads' test and bench (docs/server.md "Reads, written once").
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './helpers.js';

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** `names` at `v1` each, and `many` at each of `versions`, in a new directory. */
export function listedRegistry(names: readonly string[], versions: readonly string[]): string {
  const root = tempDir('dm-listed-registry-');
  const jinja = 'resources:\n- name: x\n  type: dummy\n';
  const template = (name: string, version: string) => {
    write(root, `${name}/${version}/${name}.jinja`, jinja);
    write(root, `${name}/${version}/example.yaml`, `resources:\n- name: t\n  type: ${name}.jinja\n`);
  };
  for (const name of names) template(name, 'v1');
  for (const version of versions) template('many', version);
  return root;
}
