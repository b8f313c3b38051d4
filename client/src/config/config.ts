/**
 * Client configuration, read in one place (docs/client.md "Configuration"): flag > environment > config file > default.
 * Library code never reads `process.env`; the CLI calls `loadConfig` once and passes options down.
 */

import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { isMapping } from '../data.js';
import { parseYaml } from '../document/yaml.js';
import { DmError, fromSystemError } from '../error.js';
import { SCHEMA_VALIDATION_MODES, type SchemaValidationMode } from '../expand/types.js';
import { DEFAULT_HTTP_TIMEOUT_MS } from '../http-limit.js';
import { parseVerifierKey } from '../integrity/keys.js';
import { nearest } from '../nearest.js';
import { authFiles } from '../oci/auth.js';
import { parseDefaultRegistry } from '../reference/registry-name.js';

/** The output formats (`-o`, the config key `output`). */
export const OUTPUT_FORMATS = ['text', 'yaml', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A registry host other than github.com: GitHub Enterprise or a mirror (docs/references.md "References"). */
export interface RegistryHostConfig {
  /** REST API base URL, e.g. https://ghe.example.com/api/v3 */
  apiUrl: string;
  /** Name of an environment variable holding the token for this host. */
  tokenEnv?: string;
}

export interface DmDirectories {
  config: string;
  cache: string;
  state: string;
}

export interface DmConfig {
  /** Default registry for short references: `<owner>/<repo>[/<collection>]`. */
  registry: string | undefined;
  /** A registry server or mirror; without it the client talks to sources directly. */
  registryUrl: string | undefined;
  githubToken: string | undefined;
  /** Token for the registry server (`DM_REGISTRY_TOKEN`), for private registries. */
  registryToken: string | undefined;
  /** The Deployment Manager service (`--manager-url`, docs/manager.md); without it deployments are local. */
  managerUrl: string | undefined;
  /** Its token (`DM_MANAGER_TOKEN`, config `managerToken`). */
  managerToken: string | undefined;
  /** GitHub API base URL for github.com references (a stand-in or proxy in tests). */
  githubApiUrl: string;
  /** Hosts other than github.com, by host name. */
  hosts: Record<string, RegistryHostConfig>;
  /** Registries served from a git repository: `host/owner/repo` → local path or URL, `@branch` optional. */
  sources: Record<string, string>;
  output: OutputFormat;
  offline: boolean;
  verbose: boolean;
  quiet: boolean;
  color: boolean;
  kube: { kubeconfig: string | undefined; context: string | undefined; namespace: string | undefined };
  dirs: DmDirectories;
  /** The config file that was read (it need not exist). */
  configFile: string;
  /** What properties that break a template's schema do (`schemaValidation`, default strict). */
  schemaValidation: SchemaValidationMode;
  /** The registry server's checksum log verifier key (`checksumKey`, `DM_CHECKSUM_KEY`; docs/integrity.md §5). */
  checksumKey?: string | undefined;
  /** Registries whose digests are not checked against the log (`DM_NOSUMCHECK=<glob>,…`). */
  noSumCheck?: string[];
  /** OCI registries (docs/oci.md): plain HTTP (`--plain-http`) and the credential files read. */
  oci?: { plainHttp: boolean; authFiles: string[] } | undefined;
  /** The one time limit of every HTTP call, ms (`--http-timeout`, `httpTimeout`; docs/client.md "Configuration"). */
  httpTimeoutMs: number;
}

/** Flags as the CLI parsed them; undefined means "not given". */
export interface ConfigFlags {
  registry?: string;
  registryUrl?: string;
  managerUrl?: string;
  output?: string;
  offline?: boolean;
  verbose?: boolean;
  quiet?: boolean;
  color?: boolean;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  config?: string;
  plainHttp?: boolean;
  /** Seconds, as typed. */
  httpTimeout?: string;
}

export interface LoadConfigOptions {
  flags?: ConfigFlags;
  env?: Record<string, string | undefined>;
  /** Reads the config file; returns undefined when it does not exist. Defaults to the file system. */
  readFile?: (path: string) => string | undefined;
  /**
   * For `dm config` itself: a config file that cannot be used is reported to this callback and
   * ignored (defaults apply), so that a broken file never blocks the command that repairs it.
   */
  onBrokenFile?: (error: DmError) => void;
}

/** The file keys, as written in `$XDG_CONFIG_HOME/dm/config.yaml`. */
interface ConfigFile {
  registry?: string;
  managerUrl?: string;
  managerToken?: string;
  registryUrl?: string;
  output?: string;
  offline?: boolean;
  githubApiUrl?: string;
  registries?: Record<string, RegistryHostConfig>;
  sources?: Record<string, string>;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  schemaValidation?: string;
  checksumKey?: string;
  httpTimeout?: number | string;
}

export const CONFIG_FILE_KEYS = [
  'registry',
  'registryUrl',
  'managerUrl',
  'managerToken',
  'output',
  'offline',
  'githubApiUrl',
  'registries',
  'sources',
  'kubeconfig',
  'context',
  'namespace',
  'schemaValidation',
  'checksumKey',
  'httpTimeout',
] as const;

/**
 * The values of the config keys that take one of a fixed set (`dm config set <key> <TAB>` offers
 * them; validateConfigFile accepts nothing else). `kubeconfig` takes file names; the other keys
 * take free text.
 */
export const CONFIG_KEY_CHOICES: {
  readonly output: readonly string[];
  readonly schemaValidation: readonly string[];
  readonly offline: readonly string[];
} = {
  output: OUTPUT_FORMATS,
  schemaValidation: SCHEMA_VALIDATION_MODES,
  offline: ['true', 'false'],
};

/** XDG base directories (https://specifications.freedesktop.org/basedir-spec/). */
export function dmDirectories(env: Record<string, string | undefined>): DmDirectories {
  const home = env.HOME ?? homedir();
  return {
    config: join(env.XDG_CONFIG_HOME || join(home, '.config'), 'dm'),
    cache: join(env.XDG_CACHE_HOME || join(home, '.cache'), 'dm'),
    state: join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'dm'),
  };
}

function readFileIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const sentence = fromSystemError(error, path)?.message ?? (error as Error).message;
    throw new DmError('CONFIG_UNREADABLE', `cannot read config file ${path}: ${sentence}`, {
      category: 'invalid-input',
    });
  }
}

function parseOutput(value: string, where: string): OutputFormat {
  const format = OUTPUT_FORMATS.find((f) => f === value);
  if (format) return format;
  throw new DmError(
    'INVALID_OUTPUT_FORMAT',
    `${where}: output format '${value}' is not one of text, yaml, json`,
    {
      category: 'usage',
    },
  );
}

function invalidConfig(path: string, message: string, hint?: string): DmError {
  return new DmError('INVALID_CONFIG_FILE', `${path}: ${message}`, {
    category: 'usage',
    ...(hint ? { hint } : {}),
  });
}

/** Whether `value` is an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '';
  } catch {
    return false;
  }
}

/** A Kubernetes namespace name (RFC 1123 label), as kubectl checks it. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A positive number of seconds, at most a day (`httpTimeout`, `--http-timeout`). */
export function isTimeoutSeconds(value: unknown): boolean {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 && n <= 86_400;
}

/**
 * The one check of a config file's keys and values (docs/client.md "Configuration"), used when the
 * file is read and by `dm config set` before it writes: the first problem is an error naming
 * `where` (the file, or `dm config set`), the key and the bad value, exit 2.
 */
export function validateConfigFile(data: unknown, where: string): ConfigFile {
  if (data === null || data === undefined) return {};
  if (!isMapping(data)) throw invalidConfig(where, 'the config file must be a mapping');
  const known = new Set<string>(CONFIG_FILE_KEYS);
  for (const [key, value] of Object.entries(data)) {
    if (!known.has(key)) {
      const closest = nearest(key, CONFIG_FILE_KEYS);
      throw invalidConfig(
        where,
        `unknown config key '${key}'`,
        `${closest ? `did you mean '${closest}'? ` : ''}known keys: ${CONFIG_FILE_KEYS.join(', ')}`,
      );
    }
    checkConfigValue(key, value, where);
  }
  return data as ConfigFile;
}

function checkConfigValue(key: string, value: unknown, where: string): void {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  if (key === 'offline') {
    if (typeof value !== 'boolean')
      throw invalidConfig(where, `offline must be true or false, not '${shown}'`);
    return;
  }
  if (key === 'httpTimeout') {
    if (!isTimeoutSeconds(value))
      throw invalidConfig(where, `httpTimeout '${shown}' is not a number of seconds between 0 and 86400`);
    return;
  }
  if (key === 'registries' || key === 'sources') {
    if (!isMapping(value)) throw invalidConfig(where, `${key} must be a mapping`);
    for (const [name, entry] of Object.entries(value)) {
      if (
        key === 'registries' &&
        !(isMapping(entry) && typeof entry.apiUrl === 'string' && isHttpUrl(entry.apiUrl))
      )
        throw invalidConfig(where, `registries.${name}.apiUrl must be an http(s) URL`);
      if (key === 'sources' && (typeof entry !== 'string' || entry === ''))
        throw invalidConfig(where, `sources.${name} must be a git URL or a path`);
    }
    return;
  }
  if (typeof value !== 'string' || value === '')
    throw invalidConfig(where, `${key} must be a non-empty string`);
  if ((key === 'registryUrl' || key === 'githubApiUrl' || key === 'managerUrl') && !isHttpUrl(value))
    throw invalidConfig(where, `${key} '${value}' is not an http(s) URL`);
  if (key === 'output' && !CONFIG_KEY_CHOICES.output.includes(value))
    throw invalidConfig(where, `output format '${value}' is not one of ${OUTPUT_FORMATS.join(', ')}`);
  if (key === 'schemaValidation' && !CONFIG_KEY_CHOICES.schemaValidation.includes(value))
    throw invalidConfig(
      where,
      `schemaValidation '${value}' is not one of ${SCHEMA_VALIDATION_MODES.join(', ')}`,
    );
  if (key === 'namespace' && !(value.length <= 63 && NAMESPACE.test(value)))
    throw invalidConfig(
      where,
      `namespace '${value}' is not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63)`,
    );
  if (key === 'kubeconfig') {
    const missing = value.split(delimiter).find((file) => file !== '' && !existsSync(file));
    if (missing !== undefined) throw invalidConfig(where, `kubeconfig '${missing}' does not exist`);
  }
  if (key === 'registry') {
    try {
      parseDefaultRegistry(value);
    } catch (error) {
      throw invalidConfig(where, `registry ${(error as Error).message}`);
    }
  }
  if (key === 'checksumKey') {
    try {
      parseVerifierKey(value);
    } catch (error) {
      throw invalidConfig(where, `checksumKey is not usable: ${(error as Error).message}`);
    }
  }
}

function parseConfigFile(text: string, path: string): ConfigFile {
  return validateConfigFile(parseYaml(text, { source: path }), path);
}

export function loadConfig(options: LoadConfigOptions = {}): DmConfig {
  const flags = options.flags ?? {};
  const env = options.env ?? {};
  const dirs = dmDirectories(env);
  const configFile = flags.config ?? env.DM_CONFIG ?? join(dirs.config, 'config.yaml');
  let file: ConfigFile = {};
  try {
    const text = (options.readFile ?? readFileIfExists)(configFile);
    if (text === undefined && (flags.config ?? env.DM_CONFIG) !== undefined) {
      // A config file named explicitly must exist (a typo would silently mean defaults).
      throw new DmError(
        'CONFIG_NOT_FOUND',
        `config file ${configFile} does not exist (named by ${flags.config !== undefined ? '--config' : 'DM_CONFIG'})`,
        { category: 'not-found' },
      );
    }
    file = text === undefined ? {} : parseConfigFile(text, configFile);
  } catch (error) {
    if (!(options.onBrokenFile && error instanceof DmError)) throw error;
    options.onBrokenFile(error);
  }
  checkKubeconfigFlag(flags.kubeconfig);
  // DM_REGISTRY_URL is --registry-url's other spelling: the same check (the flag's is the CLI's).
  const envUrl = env.DM_REGISTRY_URL;
  if (flags.registryUrl === undefined && envUrl !== undefined && envUrl !== '' && !isHttpUrl(envUrl)) {
    throw new DmError('INVALID_FLAG_VALUE', `DM_REGISTRY_URL '${envUrl}' is not an http(s) URL`, {
      category: 'usage',
      hint: 'for example DM_REGISTRY_URL=http://localhost:8080',
    });
  }
  // Every value of `file` passed validateConfigFile: nothing below can fail because of the file.
  const output =
    flags.output !== undefined
      ? parseOutput(flags.output, '--output')
      : ((file.output as OutputFormat) ?? 'text');
  return {
    oci: { plainHttp: flags.plainHttp ?? false, authFiles: authFiles(env) },
    registry: flags.registry ?? env.DM_REGISTRY ?? file.registry,
    registryUrl: flags.registryUrl ?? (env.DM_REGISTRY_URL || undefined) ?? file.registryUrl,
    githubToken: env.GITHUB_TOKEN || undefined,
    registryToken: env.DM_REGISTRY_TOKEN || undefined,
    managerUrl: flags.managerUrl ?? file.managerUrl,
    managerToken: env.DM_MANAGER_TOKEN || file.managerToken,
    githubApiUrl: env.GITHUB_API_URL ?? file.githubApiUrl ?? 'https://api.github.com',
    hosts: file.registries ?? {},
    sources: file.sources ?? {},
    output,
    offline: flags.offline ?? file.offline ?? false,
    verbose: flags.verbose ?? false,
    quiet: flags.quiet ?? false,
    color: flags.color ?? (env.NO_COLOR === undefined || env.NO_COLOR === ''),
    kube: {
      kubeconfig: flags.kubeconfig ?? file.kubeconfig ?? env.KUBECONFIG,
      context: flags.context ?? file.context,
      namespace: flags.namespace ?? file.namespace,
    },
    dirs,
    configFile,
    schemaValidation: (file.schemaValidation as SchemaValidationMode | undefined) ?? 'strict',
    checksumKey: env.DM_CHECKSUM_KEY || file.checksumKey,
    noSumCheck: (env.DM_NOSUMCHECK ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
    httpTimeoutMs: httpTimeoutOf(flags.httpTimeout, file.httpTimeout),
  };
}

/**
 * --kubeconfig names the one file kubectl reads: a typo is said here, before any command runs, as
 * `dm config set kubeconfig` says it (a dry run would otherwise plan offline; docs/deployments.md).
 */
function checkKubeconfigFlag(file: string | undefined): void {
  if (file === undefined) return;
  const shown = `--kubeconfig '${file}'`;
  let directory: boolean;
  try {
    directory = statSync(file).isDirectory();
  } catch (error) {
    throw fromSystemError(error, shown) ?? error;
  }
  if (directory) throw new DmError('IS_A_DIRECTORY', `${shown} is a directory, not a file`);
}

/** The HTTP time limit in ms: --http-timeout, else the file's httpTimeout (validated), else 30 s. */
function httpTimeoutOf(flag: string | undefined, file: number | string | undefined): number {
  if (flag !== undefined && !isTimeoutSeconds(flag)) {
    throw new DmError(
      'INVALID_FLAG_VALUE',
      `--http-timeout '${flag}' is not a number of seconds between 0 and 86400`,
      { category: 'usage' },
    );
  }
  const seconds = flag ?? file;
  return seconds === undefined ? DEFAULT_HTTP_TIMEOUT_MS : Number(seconds) * 1000;
}

/** `strict`, `warn` or `off` (the flag --schema-validation and the config key schemaValidation). */
export function parseSchemaValidation(value: unknown, where: string): SchemaValidationMode {
  const mode = SCHEMA_VALIDATION_MODES.find((m) => m === value);
  if (mode) return mode;
  throw new DmError(
    'INVALID_SCHEMA_VALIDATION',
    `${where}: '${String(value)}' is not one of ${SCHEMA_VALIDATION_MODES.join(', ')}`,
    { category: 'usage' },
  );
}

/** The flag --schema-validation when given, else the configured mode. */
export function schemaValidationOf(flag: unknown, configured: SchemaValidationMode): SchemaValidationMode {
  return flag === undefined ? configured : parseSchemaValidation(flag, '--schema-validation');
}
