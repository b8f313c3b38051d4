/**
 * A generated Jinja template version as add-versions.ts takes one (for tests and benches that
 * build registries in memory): `<template>.jinja`, its `.schema`, and any further files; each
 * file's content is put in `content` by its sha256.
 */
import { sha256Hex, versionDigest } from '../../client/src/registry/digest.js';
import type { AddedVersion } from '../../server/src/store/contract.js';

export function jinjaVersion(
  template: string,
  version: string,
  files: { body: Buffer; schema: Buffer; more?: { path: string; content: Buffer }[] },
  content: Map<string, Buffer>,
  schemaJson: string | null = null,
): AddedVersion {
  const list = [
    { path: `${template}.jinja`, content: files.body },
    { path: `${template}.jinja.schema`, content: files.schema },
    ...(files.more ?? []),
  ].map((f) => {
    const sha256 = sha256Hex(f.content);
    content.set(sha256, f.content);
    return { path: f.path, sha256, size: f.content.length };
  });
  return {
    collection: '',
    template,
    version,
    kind: 'jinja',
    dir: `${template}/${version}`,
    templateFile: `${template}.jinja`,
    schemaFile: `${template}.jinja.schema`,
    hasExample: false,
    digest: versionDigest(list),
    schemaJson,
    files: list,
  };
}
