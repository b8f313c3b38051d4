/**
 * Template references (docs/references.md "References"): the one grammar, parsed and printed here.
 *
 *   github.com/<owner>/<repo>/<collection>/<template>:<version>
 *   github.com/<owner>/<repo>/<template>:<version>          root collection
 *   <collection>/<template>:<version>                       against the default registry
 *   <template>:<version>                                    against the default registry
 *   …:=v1.1.2                                               exact pin
 *   https://host/path/redis.jinja                           plain URL
 *   oci://<host>/<owner>/<repo>/[<collection>/]<template>:<version>   an OCI registry (docs/oci.md)
 *
 * Hosts other than github.com are GitHub Enterprise or mirror hosts; whether one is configured is
 * checked where references are resolved, not here. A host is told apart from a collection by its
 * position (the first of four or five segments), so collections may have dots.
 */
import { DmError } from '../error.js';
import { formatVersionRequest, parseVersionRequest, type VersionRequest } from './pick-version.js';
import {
  checkName,
  checkRegistryName,
  type DefaultRegistry,
  HOST_RE,
  invalid,
  MAX_NAME_LENGTH,
  parseDefaultRegistry,
  type RegistryName,
} from './registry-name.js';

export {
  DEFAULT_HOST,
  type DefaultRegistry,
  isValidName,
  parseDefaultRegistry,
  type RegistryName,
} from './registry-name.js';

export interface RegistryReference extends RegistryName {
  kind: 'registry';
  /** '' for the unnamed root collection. */
  collection: string;
  template: string;
  /** Undefined only where a reference may omit the version (the command line). */
  version: VersionRequest | undefined;
}

export interface UrlReference {
  kind: 'url';
  url: string;
}

export type Reference = RegistryReference | UrlReference;

export interface ParseReferenceOptions {
  /** Default registry for short references (`--registry`, DM_REGISTRY, config file). */
  defaultRegistry?: string | DefaultRegistry | undefined;
  /** Allow `redis` without a version (command line only: it means the highest released version). */
  allowMissingVersion?: boolean;
}

const MAX_REFERENCE_LENGTH = 1024;

/**
 * Splits `<path>[:<version>]` (the version follows the last path segment, so a host may carry a
 * port: mirror.internal:8443) and parses the version; `text` is the whole reference, for messages.
 */
function splitVersion(
  text: string,
  rest: string,
  options: ParseReferenceOptions,
): { path: string; versionText: string | undefined; version: VersionRequest | undefined } {
  const colon = rest.indexOf(':', rest.lastIndexOf('/') + 1);
  const path = colon === -1 ? rest : rest.slice(0, colon);
  const versionText = colon === -1 ? undefined : rest.slice(colon + 1);
  let version: VersionRequest | undefined;
  if (versionText === undefined) {
    if (!options.allowMissingVersion)
      throw invalid(text, 'the version is missing', `add a version, e.g. ${text}:v1`);
  } else {
    try {
      version = parseVersionRequest(versionText);
    } catch (error) {
      throw invalid(text, (error as DmError).message);
    }
  }
  return { path, versionText, version };
}

/** Parses a reference or returns undefined. Never throws. */
export function tryParseReference(text: string, options: ParseReferenceOptions = {}): Reference | undefined {
  try {
    return parseReference(text, options);
  } catch {
    return undefined;
  }
}

/** Parses a reference; throws DmError INVALID_REFERENCE (or MISSING_DEFAULT_REGISTRY) naming the problem. */
export function parseReference(text: string, options: ParseReferenceOptions = {}): Reference {
  if (typeof text !== 'string' || text === '') throw invalid(String(text), 'it is empty');
  if (text.length > MAX_REFERENCE_LENGTH)
    throw invalid(text.slice(0, 60) + '…', `longer than ${MAX_REFERENCE_LENGTH} characters`);
  if (/^https?:\/\//i.test(text)) return parseUrlReference(text);
  if (/^oci:\/\//i.test(text)) return parseOciReference(text, options);
  if (/\s/.test(text)) throw invalid(text, 'it contains whitespace');

  const { path, versionText, version } = splitVersion(text, text, options);

  const segments = path.split('/');
  if (segments.some((s) => s === '')) throw invalid(text, 'it has an empty path segment');
  const first = segments[0]!;
  const looksLikeHost = segments.length >= 3 && first.includes('.') && HOST_RE.test(first);
  if (looksLikeHost) {
    if (segments.length < 4) {
      throw invalid(text, `after the host it needs <owner>/<repo>/[<collection>/]<template>`);
    }
    if (segments.length > 5) {
      throw invalid(
        text,
        `only one collection segment is allowed between repository and template, found ${segments.length - 4} (${segments
          .slice(3, -1)
          .join('/')})`,
      );
    }
    const [host, owner, repo] = segments as [string, string, string];
    const collection = segments.length === 5 ? segments[3]! : '';
    const template = segments.at(-1)!;
    const ref: RegistryReference = {
      kind: 'registry',
      host: host.toLowerCase(),
      owner,
      repo,
      collection,
      template,
      version,
    };
    checkRegistryName(text, ref);
    if (collection) checkName(text, 'collection', collection);
    checkName(text, 'template', template);
    return ref;
  }
  if (segments.length > 2) {
    throw invalid(
      text,
      segments.length === 3
        ? `a short reference is [<collection>/]<template>; '${first}' is not a host`
        : `only one collection segment is allowed between repository and template`,
      `write github.com/${segments.slice(0, 2).join('/')}/${segments.slice(2).join('/')}${versionText === undefined ? '' : `:${versionText}`} for a full reference`,
    );
  }
  const template = segments.at(-1)!;
  const explicitCollection = segments.length === 2 ? segments[0]! : undefined;
  if (explicitCollection !== undefined) checkName(text, 'collection', explicitCollection);
  checkName(text, 'template', template);
  const registryOption = options.defaultRegistry;
  if (registryOption === undefined) {
    throw new DmError(
      'MISSING_DEFAULT_REGISTRY',
      `'${text}' is a short reference, but no default registry is set`,
      {
        category: 'usage',
        details: { reference: text },
        hint: 'pass --registry <owner>/<repo>[/<collection>], set DM_REGISTRY, or write the full github.com/… reference',
      },
    );
  }
  const registry = typeof registryOption === 'string' ? parseDefaultRegistry(registryOption) : registryOption;
  return {
    kind: 'registry',
    host: registry.host,
    owner: registry.owner,
    repo: registry.repo,
    collection: explicitCollection ?? registry.collection,
    template,
    version,
  };
}

// OCI's repository name grammar (distribution spec), per path component: lowercase only.
const OCI_COMPONENT_RE = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const LOCAL_HOST_RE = /^(?:localhost|\[[0-9a-fA-F:]+\])(?::\d{1,5})?$/;

/** `oci://<host>/<owner>/<repo>/[<collection>/]<template>[:<version>]` (docs/oci.md "References"). */
function parseOciReference(text: string, options: ParseReferenceOptions): RegistryReference {
  const rest = text.slice('oci://'.length);
  if (/\s/.test(rest)) throw invalid(text, 'it contains whitespace');
  if (rest.includes('@')) {
    throw invalid(
      text,
      'dm pins OCI versions by tag and records the digest in dm.lock; a reference by digest is not taken',
    );
  }
  const { path, version } = splitVersion(text, rest, options);
  const hint = 'OCI references look like oci://<host>/<owner>/<repo>/[<collection>/]<template>:<version>';
  const segments = path.split('/');
  if (segments.some((s) => s === '')) throw invalid(text, 'it has an empty path segment', hint);
  if (segments.length < 4 || segments.length > 5) {
    throw invalid(text, 'after the host it needs <owner>/<repo>/[<collection>/]<template>', hint);
  }
  const [host, owner, repo] = segments as [string, string, string];
  if (!HOST_RE.test(host) && !LOCAL_HOST_RE.test(host))
    throw invalid(text, `'${host}' is not a host name`, hint);
  for (const part of segments.slice(1)) {
    if (!OCI_COMPONENT_RE.test(part) || part.length > MAX_NAME_LENGTH) {
      throw invalid(
        text,
        `'${part}' is not an OCI repository name component (lowercase letters and digits, with . _ __ or - between)`,
        hint,
      );
    }
  }
  return {
    kind: 'registry',
    scheme: 'oci',
    host: host.toLowerCase(),
    owner,
    repo,
    collection: segments.length === 5 ? segments[3]! : '',
    template: segments.at(-1)!,
    version,
  };
}

function parseUrlReference(text: string): UrlReference {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(text, 'it is not a valid URL');
  }
  if (url.username || url.password) throw invalid(text, 'a URL reference must not carry credentials');
  const file = url.pathname.split('/').at(-1) ?? '';
  if (!/\.(jinja|py|yaml)$/.test(file)) {
    throw invalid(text, 'a URL reference must name a template file (.jinja, .py or .yaml)');
  }
  return { kind: 'url', url: url.href };
}

/** The registry part, `github.com/<owner>/<repo>`. */
export function formatRegistryName(r: RegistryName): string {
  return `${r.scheme === 'oci' ? 'oci://' : ''}${r.host}/${r.owner}/${r.repo}`;
}

/** The OCI repository a reference of an OCI registry names: `<owner>/<repo>/[<collection>/]<template>`. */
export function ociRepository(r: Omit<RegistryReference, 'version' | 'kind'>): string {
  return `${r.owner}/${r.repo}/${r.collection ? `${r.collection}/` : ''}${r.template}`;
}

/** The template part without the version, `github.com/o/r/[c/]t`. */
export function formatTemplateName(r: Omit<RegistryReference, 'version' | 'kind'>): string {
  return `${formatRegistryName(r)}/${r.collection ? `${r.collection}/` : ''}${r.template}`;
}

/** The canonical string: always the full form; `format(parse(format(parse(s)))) === format(parse(s))`. */
export function formatReference(ref: Reference): string {
  if (ref.kind === 'url') return ref.url;
  const version = ref.version === undefined ? '' : `:${formatVersionRequest(ref.version)}`;
  return `${formatTemplateName(ref)}${version}`;
}
