/** The pages' URLs (docs/pages.md): one function per kind of page, used by views and routes. */

const segments = (text: string) => text.split('/').map(encodeURIComponent).join('/');

export function templateUrl(registry: string, collection: string, name: string, version?: string): string {
  const path = [registry, ...(collection ? [collection] : []), name].map(segments).join('/');
  return `/templates/${path}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;
}

/** The diff page of two versions of a template. */
export function diffUrl(
  registry: string,
  collection: string,
  name: string,
  from: string,
  to: string,
): string {
  return `${templateUrl(registry, collection, name, from)}/diff/${encodeURIComponent(to)}`;
}

export function registryUrl(name: string): string {
  return `/registries/${segments(name)}`;
}

export interface SearchParams {
  q: string;
  collection?: string | undefined;
  registry?: string | undefined;
  page?: number;
}

export function searchUrl(p: SearchParams): string {
  const query = new URLSearchParams();
  if (p.q) query.set('q', p.q);
  if (p.collection !== undefined) query.set('collection', p.collection);
  if (p.registry !== undefined) query.set('registry', p.registry);
  if (p.page !== undefined && p.page > 1) query.set('page', String(p.page));
  const text = query.toString();
  return text ? `/search?${text}` : '/search';
}

/** The API URL of a version's file (the raw content). */
export function fileUrl(registry: string, collection: string, name: string, version: string, path: string) {
  return `/api/v1${templateUrl(registry, collection, name, version)}/files/${segments(path)}`;
}
