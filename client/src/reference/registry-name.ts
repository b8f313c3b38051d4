/**
 * Registry names and their parts (docs/references.md "References"): the part of the reference
 * grammar that dm's configuration needs (`registry`, `--registry`), apart from versions, so that
 * reading the configuration, which every command does, does not load the version ordering and
 * its semver package (docs/expansion.md, "Speed"). reference.ts re-exports it.
 */
import { DmError } from '../error.js';

export const DEFAULT_HOST = 'github.com';

export interface RegistryName {
  host: string;
  owner: string;
  repo: string;
  /** `oci` for a registry that is an OCI registry's namespace `<owner>/<repo>` (docs/oci.md); absent for git registries. */
  scheme?: 'oci' | undefined;
}

/** The default registry for short references: `<owner>/<repo>[/<collection>]` or `<host>/<owner>/<repo>[/<collection>]`. */
export interface DefaultRegistry extends RegistryName {
  collection: string;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const OWNER_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const REPO_RE = /^[A-Za-z0-9._-]+$/;
export const HOST_RE =
  /^(?=.{1,253}(?::\d{1,5})?$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+(?::\d{1,5})?$/;
export const MAX_NAME_LENGTH = 100;

/** Template and collection names: `[A-Za-z0-9][A-Za-z0-9._-]*` (docs/registry-layout.md). */
export function isValidName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && NAME_RE.test(name);
}

export function invalid(text: string, why: string, hint?: string): DmError {
  return new DmError('INVALID_REFERENCE', `'${text}' is not a valid template reference: ${why}`, {
    category: 'invalid-input',
    details: { reference: text },
    hint: hint ?? 'references look like github.com/<owner>/<repo>/[<collection>/]<template>:<version>',
  });
}

export function checkName(text: string, what: string, name: string): void {
  if (!isValidName(name)) {
    throw invalid(
      text,
      `${what} '${name}' must match [A-Za-z0-9][A-Za-z0-9._-]* (at most ${MAX_NAME_LENGTH} characters)`,
    );
  }
}

export function checkRegistryName(text: string, r: RegistryName): void {
  if (!HOST_RE.test(r.host)) throw invalid(text, `'${r.host}' is not a host name`);
  if (!OWNER_RE.test(r.owner) || r.owner.length > 39)
    throw invalid(text, `owner '${r.owner}' is not a valid owner name`);
  if (!REPO_RE.test(r.repo) || r.repo === '.' || r.repo === '..' || r.repo.length > MAX_NAME_LENGTH) {
    throw invalid(text, `repository '${r.repo}' is not a valid repository name`);
  }
}

/** Parses `--registry`: `<owner>/<repo>[/<collection>]`, optionally with a leading host. */
export function parseDefaultRegistry(text: string): DefaultRegistry {
  const parts = text.split('/');
  const hasHost = (parts[0] ?? '').includes('.');
  const [host, rest] = hasHost ? [parts[0] ?? '', parts.slice(1)] : [DEFAULT_HOST, parts];
  if (rest.length < 2 || rest.length > 3 || rest.some((p) => p === '')) {
    throw new DmError(
      'INVALID_REGISTRY',
      `'${text}' is not a registry: expected <owner>/<repo>[/<collection>]`,
      {
        category: 'usage',
      },
    );
  }
  const registry: DefaultRegistry = { host, owner: rest[0]!, repo: rest[1]!, collection: rest[2] ?? '' };
  try {
    checkRegistryName(text, registry);
    if (registry.collection) checkName(text, 'collection', registry.collection);
  } catch (error) {
    throw new DmError(
      'INVALID_REGISTRY',
      (error as DmError).message.replace('template reference', 'registry'),
      {
        category: 'usage',
      },
    );
  }
  return registry;
}
