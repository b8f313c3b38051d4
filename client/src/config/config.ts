/**
 * Client configuration, read in one place (spec/cli.md): flag > environment > config file > default.
 * Library code never reads `process.env`; the CLI calls `loadConfig` once and passes options down.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseYaml } from '../document/yaml.js';
import { DmError } from '../error.js';

export type OutputFormat = 'text' | 'yaml' | 'json';

/** A registry host other than github.com: GitHub Enterprise or a mirror (spec/registry.md §2). */
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
}

export interface LoadConfigOptions {
  flags?: ConfigFlags;
  env?: Record<string, string | undefined>;
  /** Reads the config file; returns undefined when it does not exist. Defaults to the file system. */
  readFile?: (path: string) => string | undefined;
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
] as const;

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
    throw new DmError('CONFIG_UNREADABLE', `cannot read config file ${path}: ${(error as Error).message}`);
  }
}

function parseOutput(value: string, where: string): OutputFormat {
  if (value === 'text' || value === 'yaml' || value === 'json') return value;
  throw new DmError(
    'INVALID_OUTPUT_FORMAT',
    `${where}: output format '${value}' is not one of text, yaml, json`,
    {
      category: 'usage',
    },
  );
}

function parseConfigFile(text: string, path: string): ConfigFile {
  const data = parseYaml(text, { source: path });
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new DmError('INVALID_CONFIG', `${path}: the config file must be a mapping`, {
      category: 'invalid-input',
    });
  }
  const known = new Set<string>(CONFIG_FILE_KEYS);
  for (const key of Object.keys(data)) {
    if (!known.has(key)) {
      throw new DmError('INVALID_CONFIG', `${path}: unknown key '${key}'`, {
        category: 'invalid-input',
        hint: `known keys: ${CONFIG_FILE_KEYS.join(', ')}`,
      });
    }
  }
  const file = data as ConfigFile;
  for (const [host, entry] of Object.entries(file.registries ?? {})) {
    if (!entry || typeof entry.apiUrl !== 'string') {
      throw new DmError('INVALID_CONFIG', `${path}: registries.${host}.apiUrl must be a URL string`, {
        category: 'invalid-input',
      });
    }
  }
  for (const key of ['managerUrl', 'managerToken'] as const) {
    if (file[key] !== undefined && typeof file[key] !== 'string') {
      throw new DmError('INVALID_CONFIG', `${path}: ${key} must be a string`, { category: 'invalid-input' });
    }
  }
  for (const [name, location] of Object.entries(file.sources ?? {})) {
    if (typeof location !== 'string' || location === '') {
      throw new DmError('INVALID_CONFIG', `${path}: sources.${name} must be a git URL or a path`, {
        category: 'invalid-input',
      });
    }
  }
  return file;
}

export function loadConfig(options: LoadConfigOptions = {}): DmConfig {
  const flags = options.flags ?? {};
  const env = options.env ?? {};
  const dirs = dmDirectories(env);
  const configFile = flags.config ?? env.DM_CONFIG ?? join(dirs.config, 'config.yaml');
  const text = (options.readFile ?? readFileIfExists)(configFile);
  const file = text === undefined ? {} : parseConfigFile(text, configFile);
  const output =
    flags.output !== undefined
      ? parseOutput(flags.output, '--output')
      : file.output !== undefined
        ? parseOutput(file.output, `${configFile}: output`)
        : 'text';
  return {
    registry: flags.registry ?? env.DM_REGISTRY ?? file.registry,
    registryUrl: flags.registryUrl ?? env.DM_REGISTRY_URL ?? file.registryUrl,
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
  };
}
