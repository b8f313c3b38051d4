/**
 * Every lint finding code (docs/registry-layout.md "Finding codes"), with its severity and meaning. Codes are
 * stable: tools and the registry server store them. docs/registry-layout.md explains each one, and
 * `registry-fixtures/broken/` holds exactly one instance of each (a test keeps the three in step).
 *
 * An error finding about a version directory means the indexer skips that version; a warning
 * never removes anything.
 */
import type { FindingSeverity } from './types.js';

export interface FindingCodeInfo {
  severity: FindingSeverity;
  /** One line: what the finding means. */
  meaning: string;
}

export const FINDING_CODES = {
  REGISTRY_YAML_INVALID: {
    severity: 'error',
    meaning:
      'registry.yaml is not valid YAML or not of the shape {name?: <host>/<owner>/<repo>, collections: {<name>: <path>}}; a bad entry is skipped',
  },
  REGISTRY_YAML_UNKNOWN_KEY: {
    severity: 'warning',
    meaning: 'registry.yaml has a top-level key other than `name` and `collections`; it is ignored',
  },
  REGISTRY_YAML_INVALID_NAME: {
    severity: 'error',
    meaning:
      'a collection name in registry.yaml has a slash or does not match [A-Za-z0-9][A-Za-z0-9._-]*; the entry is skipped',
  },
  REGISTRY_YAML_PATH_ESCAPES: {
    severity: 'error',
    meaning: 'a path in registry.yaml is absolute or has a `..` segment; the entry is skipped',
  },
  REGISTRY_YAML_DUPLICATE_PATH: {
    severity: 'error',
    meaning: 'two collections in registry.yaml map to the same directory; neither is served',
  },
  REGISTRY_YAML_MISSING_PATH: {
    severity: 'error',
    meaning: 'a path in registry.yaml names no directory of the repository; the collection is empty',
  },
  SHADOWED_DIRECTORY: {
    severity: 'warning',
    meaning:
      'a top-level directory is named like a collection that registry.yaml maps elsewhere; it is not served',
  },
  UNSAFE_PATH: {
    severity: 'error',
    meaning:
      'a file or directory name has a backslash or a control character (docs/registry-layout.md, "Paths and names"); it is not served, nor the version holding it; the rest of the registry is',
  },
  INVALID_NAME: {
    severity: 'error',
    meaning:
      'a collection or template directory name does not match [A-Za-z0-9][A-Za-z0-9._-]*; it is skipped with everything in it',
  },
  NO_VERSIONS: {
    severity: 'warning',
    meaning: 'a template directory of a named collection holds no version directory',
  },
  NOT_A_VERSION_DIR: {
    severity: 'warning',
    meaning:
      'a directory inside a template directory does not start with v<digit>; it is not a version and is ignored',
  },
  INVALID_VERSION_DIR: {
    severity: 'error',
    meaning: 'a directory named v<digit>… is not a valid version (v01, v1..2, v1.2.3.4); it is skipped',
  },
  DUPLICATE_VERSION: {
    severity: 'error',
    meaning:
      'two version directories denote the same version (v1 and v1.0.0, or differ only in build metadata); neither is served',
  },
  NO_TEMPLATE_FILE: {
    severity: 'error',
    meaning:
      'a version directory has no top-level <template>.jinja, <template>.py or blueprint.yaml; it is skipped',
  },
  TWO_TEMPLATE_FILES: {
    severity: 'error',
    meaning:
      'a version directory has more than one of <template>.jinja, <template>.py, blueprint.yaml; it is skipped',
  },
  TEMPLATE_NAME_MISMATCH: {
    severity: 'error',
    meaning:
      "a version directory's only top-level .jinja/.py file is not named after the template directory; it is skipped",
  },
  SCHEMA_NAME_MISMATCH: {
    severity: 'error',
    meaning:
      'a top-level .schema file is named neither <template file>.schema nor after another top-level file; the version is skipped',
  },
  MISSING_EXAMPLE: {
    severity: 'warning',
    meaning: 'a template version has no example.yaml (a configuration that deploys one instance)',
  },
  VERSION_TOO_MANY_FILES: {
    severity: 'error',
    meaning:
      'a version directory holds more files than a version may (1,000, counting subdirectories); the version is skipped',
  },
  EXAMPLE_FAILED: {
    severity: 'error',
    meaning:
      "a version's example.yaml does not expand with no extra properties (the message says why); found by dm lint, which expands every example, not by the tree scan",
  },
  SCHEMA_INVALID: {
    severity: 'error',
    meaning:
      "a version's <template>.schema is not a valid schema (the message says why); found by dm lint, which reads every schema, not by the tree scan",
  },
  SCHEMA_PYTHON_TYPE: {
    severity: 'warning',
    meaning:
      'a schema names a type the Python way (`int`, `bool`, `str`, `float`, `dict`, `list`); it is read as the JSON Schema name; the message names file:line',
  },
} as const satisfies Record<string, FindingCodeInfo>;

export type FindingCode = keyof typeof FINDING_CODES;

/** Every code, in the order of the table above. */
export const ALL_FINDING_CODES = Object.keys(FINDING_CODES) as FindingCode[];

/** Codes that need more than the tree (dm lint expands each example.yaml); the pure scan never gives them. */
export const EXPANSION_FINDING_CODES: readonly FindingCode[] = [
  'EXAMPLE_FAILED',
  'SCHEMA_INVALID',
  'SCHEMA_PYTHON_TYPE',
];

/** The codes the pure tree scan can give. */
export const SCAN_FINDING_CODES = ALL_FINDING_CODES.filter((c) => !EXPANSION_FINDING_CODES.includes(c));
