/**
 * Shared by the benches that add versions (bench/mirror.ts, bench/add-versions-cpu.ts): a generated
 * registry of `count` versions, 100 templates, each version a ~9 KB template and a ~1 KB schema, all
 * distinct, the same every run.
 */
import type { AddedVersion } from '../server/src/store/contract.js';
import { jinjaVersion } from '../test/support/jinja-version.js';
import { WORDS } from './generated-index.js';

export function generatedVersions(count: number): { versions: AddedVersion[]; content: Map<string, Buffer> } {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const content = new Map<string, Buffer>();
  const versions: AddedVersion[] = [];
  for (let i = 0; i < count; i++) {
    const template = `t${i % 100}`;
    const version = `v1.${Math.floor(i / 100)}.0`;
    const body = Buffer.from(
      `resources:\n- name: {{ env["name"] }}-${i}\n  type: ${template}\n  # ${words(1300)}\n`,
    );
    const schema = Buffer.from(`info:\n  title: ${template} ${version}\n  description: ${words(150)}\n`);
    versions.push(jinjaVersion(template, version, { body, schema }, content));
  }
  return { versions, content };
}
