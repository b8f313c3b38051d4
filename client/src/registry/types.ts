/**
 * The registry layout's vocabulary (docs/registry-layout.md), shared by `dm lint`, the client's
 * local resolver and the server's indexer. The scanner is pure: it sees a tree of paths (as git or
 * GitHub's trees API gives them) and never touches disk or network.
 */

/** One entry of a repository tree, paths relative to the repository root, `/`-separated. */
export interface TreeEntry {
  path: string;
  type: 'blob' | 'tree';
  /** Size in bytes, for blobs, when known. */
  size?: number;
  /** The git object id (SHA-1; a blob's, or a tree's) when the tree came from git/GitHub; absent for a plain directory. */
  gitSha?: string;
}

export type TemplateKind = 'jinja' | 'python' | 'blueprint';

/** A file of a version directory. `path` is relative to the version directory. */
export interface VersionFile {
  path: string;
  /** The path from the repository root. */
  repoPath: string;
  size?: number;
  gitSha?: string;
}

export interface ScannedVersion {
  /** Collection name; '' for the unnamed root collection. */
  collection: string;
  template: string;
  /** The version directory's name as written, e.g. `v1.1`. */
  version: string;
  /** The directory from the repository root, e.g. `big-data/spark/v2`. */
  dir: string;
  kind: TemplateKind;
  /** The top-level template file (`redis.jinja`, `spark.py`, `blueprint.yaml`), relative to `dir`. */
  templateFile: string;
  /** `<template file>.schema` when present, relative to `dir`. */
  schemaFile?: string;
  /** Whether `example.yaml` exists. */
  hasExample: boolean;
  /** Every file of the version directory, sorted by path. */
  files: VersionFile[];
}

export type FindingSeverity = 'error' | 'warning';

/** A lint finding: a stable code, the path it is about, one sentence. */
export interface Finding {
  code: string;
  severity: FindingSeverity;
  path: string;
  message: string;
  /** The collection ('' for the root) / template / version directory name the finding is about, when it is about one. */
  collection?: string;
  template?: string;
  version?: string;
  /** Other paths involved, e.g. both directories of a DUPLICATE_VERSION conflict. */
  related?: string[];
}

export interface ScannedCollection {
  /** '' for the root collection. */
  name: string;
  /** Directory from the repository root ('' for the root). */
  path: string;
}

/** A template directory that was scanned (whether or not any of its versions are valid). */
export interface ScannedTemplate {
  collection: string;
  name: string;
  /** Directory from the repository root. */
  path: string;
}

export interface ScanResult {
  collections: ScannedCollection[];
  /** Every template directory with a valid name, sorted by collection and name. */
  templates: ScannedTemplate[];
  /** The versions the indexer keeps (valid ones), sorted by collection, template, version order. */
  versions: ScannedVersion[];
  findings: Finding[];
  /**
   * Top-level directories holding their own `registry.yaml`: separate registries, not part of this
   * one (docs/registry-layout.md), sorted.
   */
  nestedRegistries: string[];
  /** The name registry.yaml declares (`name: github.com/owner/repo`), normalized, when it is sound. */
  registryName?: string;
}
