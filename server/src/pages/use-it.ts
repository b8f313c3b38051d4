/**
 * What the template page tells a user to paste (docs/pages.md, "Use it"): a minimal configuration
 * whose resource type is the full reference (not the version directory's own `redis.jinja`, which
 * only works inside the registry), the properties the schema requires and does not default, and
 * the commands that use it. Also where a version's files live at their source: a link into the
 * GitHub repository at the indexed commit, a git URL as text, and "local directory" for a directory
 * (whose path on the server is never shown to anonymous readers).
 */
import { isLocalSource } from '../service/sources.js';
import type { RegistryRow } from '../service.js';
import { withoutCredentials } from '../service.js';
import type { PropertyRow } from './properties.js';

/** A resource name from a template name: lower-case letters, digits and dashes. */
function resourceName(template: string): string {
  const name = template
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `my-${name || 'resource'}`;
}

/** A YAML plain scalar when that reads back as the same string, else a JSON (double-quoted) one. */
function yamlKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) ? key : JSON.stringify(key);
}

/** `config.yaml` text using `reference`, with the required properties that have no default. */
export function minimalConfig(
  template: string,
  reference: string,
  properties: readonly PropertyRow[],
): string {
  const needed = properties.filter(
    (p) => p.required && p.default === null && !p.name.includes('.') && !p.name.includes('[]'),
  );
  const lines = ['resources:', `- name: ${resourceName(template)}`, `  type: ${reference}`];
  if (needed.length > 0) {
    lines.push('  properties:');
    for (const p of needed) lines.push(`    ${yamlKey(p.name)}:   # required${p.type ? `, ${p.type}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The commands that lock and render a configuration using the template, through the registry
 * server that rendered the page (`serverUrl`, its origin as the browser reached it): pasted as they
 * are, they resolve here rather than at the reference's own host.
 */
export function useCommands(reference: string, serverUrl: string): string {
  return [
    `dm config set registryUrl ${serverUrl}   # once: resolve through this registry server`,
    'dm install config.yaml          # lock the reference in dm.lock',
    'dm expand config.yaml           # render it: resources and layout',
    `dm expand ${reference} --registry-url ${serverUrl}`,
  ].join('\n');
}

export type SourceLink =
  | { kind: 'link'; label: string; href: string }
  | { kind: 'text'; label: string }
  /** A directory on the server (a plain one, a local git repository or a file:// URL). */
  | { kind: 'local'; commit: string | null };

export { isLocalSource };

function joinPath(...parts: string[]): string {
  return parts
    .flatMap((p) => p.split('/'))
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}

/**
 * Where the version directory `dir` (registry-relative) is at its source, at `commit`. Directory
 * sources are "local directory", never their path; a local git repository keeps its commit.
 */
export function sourceLink(
  row: Pick<RegistryRow, 'sourceType' | 'source' | 'path'>,
  dir: string,
  commit: string | null,
): SourceLink {
  const path = joinPath(row.path, dir);
  if (isLocalSource(row)) return { kind: 'local', commit: row.sourceType === 'git' ? commit : null };
  if (row.sourceType === 'github' && commit && /^[0-9a-f]{7,64}$/i.test(commit)) {
    const [host = '', owner = '', repo = ''] = row.source.split('/');
    const href = `https://${host}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/tree/${commit}/${path
      .split('/')
      .map(encodeURIComponent)
      .join('/')}`;
    return { kind: 'link', label: `${row.source}/${path} @ ${commit.slice(0, 12)}`, href };
  }
  if (row.sourceType === 'github' || row.sourceType === 'git') {
    return {
      kind: 'text',
      label: `${withoutCredentials(row.source)} ${path}${commit ? ` @ ${commit.slice(0, 12)}` : ''}`,
    };
  }
  return { kind: 'text', label: `${row.sourceType} ${path}` };
}
