/**
 * Every error code dm and dm-registry emit, with its category (which decides the CLI's exit code
 * and the server's HTTP status, client/src/error.ts) and its meaning. `DmError`'s code is typed by
 * this table, so a code that is not here does not compile; docs/errors.md lists the same codes
 * (generated from this table by `npm run docs:errors`, checked by a test).
 *
 * A code has one category, or, where the same failure is a usage error in one place and bad input
 * in another, a short list whose first entry is the default; a call site may pick only a listed one.
 */

/** What kind of failure this is; decides exit codes and HTTP statuses at the edges. */
export type ErrorCategory =
  | 'usage' // bad flags or arguments: exit 2, HTTP 400
  | 'invalid-input' // malformed reference, YAML, document: exit 1, HTTP 400
  | 'not-found' // reference, version, deployment, file: exit 3, HTTP 404
  | 'validation' // schema or lint validation failed: exit 4, HTTP 422
  | 'conflict' // exit 1, HTTP 409
  | 'unreachable' // network, registry server, cluster: exit 5, HTTP 503
  | 'unauthorized' // exit 1, HTTP 401
  | 'forbidden' // exit 1, HTTP 403
  | 'rate-limited' // exit 5, HTTP 429
  | 'upstream' // a mirror's upstream registry failed or is known down: exit 5, HTTP 502
  | 'upstream-timeout' // an upstream (a mirror's upstream registry, GitHub) did not answer in time: exit 5, HTTP 504
  | 'limit' // a resource limit was hit (time, memory, size): exit 1, HTTP 422
  | 'blocked' // untrusted code tried something forbidden: exit 1, HTTP 422
  | 'error'; // anything else: exit 1, HTTP 500

export interface ErrorCodeEntry {
  /** The category, or the categories a call site may choose from (the first is the default). */
  readonly category: ErrorCategory | readonly [ErrorCategory, ...ErrorCategory[]];
  /** One sentence: what happened. */
  readonly meaning: string;
}

const ALL_CATEGORIES = [
  'error',
  'usage',
  'invalid-input',
  'not-found',
  'validation',
  'conflict',
  'unreachable',
  'unauthorized',
  'forbidden',
  'rate-limited',
  'upstream',
  'upstream-timeout',
  'limit',
  'blocked',
] as const satisfies readonly ErrorCategory[];

/** Every category, with the default first. */
function firstOf<const D extends ErrorCategory>(first: D): readonly [D, ...ErrorCategory[]] {
  return [first, ...ALL_CATEGORIES.filter((c) => c !== first)];
}
const VALIDATION_FIRST = firstOf('validation');
const INVALID_INPUT_FIRST = firstOf('invalid-input');

export const ERROR_CODES = {
  // Usage: flags, arguments, commands.
  USAGE: { category: 'usage', meaning: 'A command was called with the wrong arguments.' },
  INVALID_ARGUMENT: {
    category: 'usage',
    meaning: 'An argument is a kind of input (file, directory, reference, URL) this command does not take.',
  },
  INVALID_FLAG: { category: 'usage', meaning: 'A flag has a value of the wrong form.' },
  INVALID_FLAG_VALUE: {
    category: 'usage',
    meaning: 'A numeric or URL flag has a value that is not a positive number or an http(s) URL.',
  },
  INVALID_OUTPUT_FORMAT: { category: 'usage', meaning: 'The output format is not one of text, yaml, json.' },
  INVALID_SHELL: {
    category: 'usage',
    meaning: '`dm completion` was asked for a shell other than bash, zsh, fish.',
  },
  INVALID_PROPERTY: {
    category: 'usage',
    meaning: 'A `--properties` assignment is not of the form key=value.',
  },
  INVALID_SCHEMA_VALIDATION: {
    category: 'usage',
    meaning: 'The schema validation mode is not one of the known modes.',
  },
  INVALID_PORT: { category: 'usage', meaning: 'The port of dm-registry is not a port number.' },
  INVALID_CLUSTER: { category: 'usage', meaning: 'A `--cluster` flag is not NAME=KUBECONFIG.' },
  INVALID_SCOPE: {
    category: 'usage',
    meaning: 'A deployment scope is not cluster/namespace, cluster/*, cluster or *.',
  },
  INVALID_SECRET_KEY: {
    category: 'usage',
    meaning: 'DM_REGISTRY_SECRET_KEY is not 32 base64-encoded bytes.',
  },
  INVALID_UPSTREAM: { category: 'usage', meaning: 'The upstream of a mirror is not an http(s) URL.' },
  INVALID_DEPLOYMENT_NAME: {
    category: 'usage',
    meaning: 'A deployment name is not a DNS label of at most 53 characters.',
  },
  MISSING_IMPORTS: { category: 'usage', meaning: '`dm blueprint` was called without `--imports`.' },
  MISSING_DEFAULT_REGISTRY: {
    category: 'usage',
    meaning: 'A short reference was given, but no default registry is set.',
  },
  UNNAMED_REGISTRY_DIR: {
    category: 'usage',
    meaning: 'A short reference needs a registry directory that has a name, and the directory has none.',
  },
  REGISTRY_URL_REQUIRED: {
    category: 'usage',
    meaning: 'The command needs a registry server, and none is configured.',
  },
  CLUSTER_REQUIRED: {
    category: 'usage',
    meaning: 'A new deployment on a Deployment Manager needs `--cluster`.',
  },
  GIT_CACHE_REQUIRED: {
    category: 'usage',
    meaning: 'A git source needs a cache directory, and none was given.',
  },
  NOT_SUPPORTED: {
    category: 'usage',
    meaning: 'The input is not supported in this mode (for example a directory with --manager-url).',
  },
  REFERENCE_NOT_SUPPORTED: {
    category: 'usage',
    meaning: 'A registry reference was given where only files can be deployed.',
  },
  URL_REFERENCE_NOT_SUPPORTED: {
    category: 'usage',
    meaning: 'A plain URL was given where a registry reference is needed.',
  },
  UNSUPPORTED_DATABASE: {
    category: 'usage',
    meaning:
      'The dm-registry subcommand does not support this database yet, or the --db URL has a scheme other than file: and postgres://.',
  },
  METHOD_NOT_ALLOWED: {
    category: 'usage',
    meaning: 'The server has this path, but not for this HTTP method: it answers 405 with an Allow header.',
  },
  HEADERS_TOO_LARGE: {
    category: 'usage',
    meaning:
      "A request's headers (or its URL) are larger than the server reads: it answers 431 with this error.",
  },
  NOT_A_REGISTRY_ROOT: {
    category: 'usage',
    meaning: '`dm lint` was given a template or version directory instead of a registry root.',
  },
  OFFLINE: { category: 'usage', meaning: 'The command needs the network, and --offline forbids it.' },
  INVALID_CONFIG_KEY: { category: 'usage', meaning: '`dm config` was given a key it does not know.' },

  // Configuration of dm itself.
  CONFIG_NOT_FOUND: {
    category: 'not-found',
    meaning: 'The config file named by --config or DM_CONFIG does not exist.',
  },
  CONFIG_UNREADABLE: { category: 'invalid-input', meaning: 'The config file cannot be read or parsed.' },
  INVALID_CONFIG_FILE: {
    category: 'usage',
    meaning:
      'The config file (or `dm config set`) has an unknown key or a value of the wrong form; the message names the file, key and value.',
  },

  // Files and input.
  FILE_NOT_FOUND: {
    category: 'not-found',
    meaning: 'A file named on the command line or in a request does not exist.',
  },
  FILE_UNREADABLE: {
    category: 'invalid-input',
    meaning: 'A file exists but cannot be read (permission, not a regular file).',
  },
  FILE_EXISTS: {
    category: 'conflict',
    meaning: 'A file dm would create already exists, and dm never overwrites it.',
  },
  IS_A_DIRECTORY: { category: 'usage', meaning: 'A directory was given where a file is needed.' },
  NOT_A_DIRECTORY: {
    category: ['usage', 'invalid-input'],
    meaning: 'A file was given where a directory is needed.',
  },
  PERMISSION_DENIED: { category: 'error', meaning: 'The operating system refused access to a file.' },
  PORT_IN_USE: { category: 'usage', meaning: 'The port dm-registry should listen on is in use.' },
  UNREACHABLE: {
    category: 'unreachable',
    meaning: 'A host cannot be reached (DNS lookup failed, connection refused).',
  },
  INVALID_YAML: { category: 'invalid-input', meaning: 'A YAML document cannot be parsed.' },
  YAML_TOO_LARGE: {
    category: 'limit',
    meaning: 'A YAML input is larger than allowed, in bytes or in nodes after aliases are expanded.',
  },
  INVALID_JSON: { category: 'invalid-input', meaning: 'A JSON document or request body cannot be parsed.' },
  INVALID_DOCUMENT: {
    category: 'invalid-input',
    meaning: 'A document lacks what it needs (kind, metadata.name, a mapping).',
  },
  DOCUMENT_TOO_DEEP: {
    category: 'limit',
    meaning: 'A document is nested too deeply (or refers to itself) to process.',
  },
  INVALID_CONTEXT: {
    category: 'invalid-input',
    meaning: 'The context of `dm template render` is not a YAML mapping.',
  },
  UNSAFE_PATH: { category: 'error', meaning: 'A path would be written outside its target directory.' },
  UNSAFE_IMPORT_PATH: {
    category: 'invalid-input',
    meaning: "An import of a URL template is not a relative path inside the template's directory.",
  },

  // References, versions, registries, resolution.
  INVALID_PLUGIN_PARAMETERS: {
    category: 'invalid-input',
    meaning: 'Argo CD plugin parameters (ARGOCD_APP_PARAMETERS) are not the list Argo CD defines.',
  },
  INVALID_RESOURCE_LIST: {
    category: 'invalid-input',
    meaning: 'The input of `dm fn` is not a KRM ResourceList, or its functionConfig names no configuration.',
  },
  REFERENCE_NEEDS_CLUSTER: {
    category: 'validation',
    meaning: 'A `$(ref…)` value needs the live cluster, which `dm argocd generate` and `dm fn` never ask.',
  },
  INVALID_REFERENCE: {
    category: ['invalid-input', 'validation'],
    meaning: 'A template reference (or a resource reference in a deployment plan) is malformed.',
  },
  INVALID_VERSION: {
    category: 'invalid-input',
    meaning: 'A version is not of the form v<major>[.<minor>[.<patch>]].',
  },
  INVALID_REGISTRY: {
    category: ['usage', 'invalid-input'],
    meaning: 'A registry is not <owner>/<repo>[/<collection>] (or a registry definition is invalid).',
  },
  INVALID_SOURCE: {
    category: ['invalid-input', 'usage'],
    meaning: 'A source (git URL, branch, path, directory) is not one dm can read.',
  },
  INVALID_PATH: { category: 'invalid-input', meaning: 'A path is not inside the registry.' },
  UNSUPPORTED_REFERENCE: {
    category: 'invalid-input',
    meaning: 'The registry server resolves registry references only, not URLs.',
  },
  UNKNOWN_HOST: { category: 'not-found', meaning: 'A reference names a host no configured registry serves.' },
  NOT_FOUND: {
    category: 'not-found',
    meaning: 'The thing asked for (route, blueprint, item) does not exist.',
  },
  REGISTRY_NOT_FOUND: {
    category: 'not-found',
    meaning: 'No configured registry or source serves the reference.',
  },
  REGISTRY_EXISTS: {
    category: 'conflict',
    meaning:
      'A registry of that name is already on the server (one that only a pull-through created is mirrored whole by registering its `<upstream>/<name>` source instead: docs/mirroring.md).',
  },
  REGISTRY_DIR_NOT_FOUND: { category: 'not-found', meaning: 'A registry directory does not exist.' },
  REGISTRY_DIR_UNREADABLE: { category: 'error', meaning: 'A registry directory cannot be read.' },
  REGISTRY_TOO_LARGE: { category: 'limit', meaning: 'A registry directory has more files than allowed.' },
  REGISTRY_UNREACHABLE: { category: 'unreachable', meaning: 'The registry server cannot be reached.' },
  REGISTRY_ANSWER_TOO_LARGE: {
    category: 'limit',
    meaning:
      'The registry server sent an answer larger than dm reads (a JSON answer over 64 MiB, a file over 32 MiB).',
  },
  NOT_A_REGISTRY_SERVER: {
    category: 'unreachable',
    meaning: 'The --registry-url answered, but not as a dm registry server (for example with an HTML page).',
  },
  TEMPLATE_NOT_FOUND: { category: 'not-found', meaning: 'The template does not exist in the registry.' },
  VERSION_NOT_FOUND: {
    category: 'not-found',
    meaning: 'No version of the template matches the version asked for.',
  },
  TEMPLATE_FILE_MISSING: {
    category: 'not-found',
    meaning: 'A template version lacks a file it should have.',
  },
  SCHEMA_NOT_FOUND: { category: 'not-found', meaning: 'A template version has no schema.' },
  CONTENT_NOT_FOUND: {
    category: 'not-found',
    meaning: 'No source could fetch a file of a resolved version.',
  },
  CONTENT_MISSING: {
    category: 'invalid-input',
    meaning: 'A version to add names file content the server does not have.',
  },
  CONTENT_MISMATCH: {
    category: 'invalid-input',
    meaning: 'The content a registry serves for a version differs from what dm.lock records.',
  },
  DIGEST_MISMATCH: {
    category: ['validation', 'error'],
    meaning: 'A file does not have the digest recorded for it (tampered or corrupted).',
  },
  INVALID_DIGEST: { category: 'invalid-input', meaning: 'A digest is not a sha256 digest.' },
  INVALID_DIGEST_INPUT: {
    category: 'error',
    meaning: 'The file list of a version digest is malformed (a file listed twice, a bad hash).',
  },
  VERSION_CONFLICT: {
    category: 'conflict',
    meaning: 'A published version would change its content; published versions are immutable.',
  },
  OFFLINE_MISSING: {
    category: 'unreachable',
    meaning: 'With --offline, something needed is neither in dm.lock nor in the cache.',
  },
  URL_NOT_FOUND: { category: 'not-found', meaning: 'A URL reference answered 404.' },
  URL_FETCH_FAILED: { category: 'unreachable', meaning: 'A URL reference answered with an error status.' },
  URL_UNREACHABLE: { category: 'unreachable', meaning: 'A URL reference cannot be fetched.' },
  URL_TOO_LARGE: { category: 'limit', meaning: 'A URL reference is larger than allowed.' },
  URL_NOT_HTTPS: {
    category: 'invalid-input',
    meaning:
      'A template URL (a plain URL reference, an import by URL, or where one redirects) is not https (plain http only from a loopback address).',
  },
  URL_IMPORT_REFUSED: {
    category: 'invalid-input',
    meaning:
      'A configuration or schema imports a file by URL that dm does not fetch: one that is not a template file, one in content from a registry, or any where URLs are not fetched (the Deployment Manager API never fetches addresses a request names).',
  },
  TOO_MANY_URL_IMPORTS: {
    category: 'limit',
    meaning: 'One expansion imports more files by URL than allowed.',
  },

  // Lock file and install.
  LOCKFILE_NOT_FOUND: { category: 'not-found', meaning: 'dm.lock does not exist.' },
  INVALID_LOCKFILE: {
    category: ['invalid-input', 'validation'],
    meaning: 'dm.lock cannot be read (bad YAML, unknown lockfileVersion, malformed entries).',
  },
  LOCKFILE_OUTDATED: {
    category: 'validation',
    meaning: 'dm.lock would have to change, and --frozen-lockfile forbids it.',
  },
  NOT_IN_LOCK: {
    category: 'not-found',
    meaning: '`dm update` was given a reference that is not in dm.lock.',
  },
  TARGET_EXISTS: { category: 'conflict', meaning: 'The install target cannot be written.' },
  TARGET_UNWRITABLE: {
    category: 'invalid-input',
    meaning:
      'A directory dm was told to write (`pull --to`) cannot be made there (no parent, no permission).',
  },

  // Sources (GitHub, git, archives).
  SOURCE_NOT_FOUND: { category: 'not-found', meaning: 'A source (repository, branch, path) does not exist.' },
  SOURCE_UNAUTHORIZED: { category: 'unauthorized', meaning: 'A source refused the credential.' },
  SOURCE_FORBIDDEN: { category: 'forbidden', meaning: 'A source refused access.' },
  SOURCE_RATE_LIMITED: { category: 'rate-limited', meaning: 'A source (GitHub) rate limit was reached.' },
  SOURCE_UNREACHABLE: {
    category: ['unreachable', 'upstream'],
    meaning: 'A source cannot be reached (unreachable), or answered with an error status (upstream).',
  },
  SOURCE_TOO_LARGE: { category: 'limit', meaning: 'A source tree has more files or bytes than allowed.' },
  GIT_FAILED: { category: ['unreachable', 'error'], meaning: 'A git command failed.' },
  ARCHIVE_TOO_LARGE: { category: 'limit', meaning: 'An archive is larger than allowed.' },
  INVALID_ARCHIVE: { category: 'invalid-input', meaning: 'An archive is not a readable tar archive.' },
  UNSAFE_ARCHIVE: {
    category: 'blocked',
    meaning: 'An archive entry would escape its directory, or is a link or device.',
  },

  // OCI registries (docs/oci.md).
  OCI_NOT_FOUND: { category: 'not-found', meaning: 'An OCI repository, tag or blob does not exist.' },
  OCI_NOT_A_TEMPLATE: {
    category: 'invalid-input',
    meaning: 'An OCI manifest or blob is not a dm template artifact (another artifact type, or malformed).',
  },
  OCI_TOO_LARGE: { category: 'limit', meaning: 'An OCI manifest or blob is larger than dm reads.' },
  OCI_UNAUTHORIZED: {
    category: 'unauthorized',
    meaning: 'An OCI registry refused the credentials (or asked for some and none are configured).',
  },
  OCI_FORBIDDEN: { category: 'forbidden', meaning: 'An OCI registry refused access to a repository.' },
  OCI_UNREACHABLE: { category: 'unreachable', meaning: 'An OCI registry cannot be reached in time.' },
  OCI_REGISTRY_ERROR: { category: 'upstream', meaning: 'An OCI registry answered a request with an error.' },
  OCI_TAG_EXISTS: {
    category: 'conflict',
    meaning: '`dm push` would replace a tag that holds other content (use --force to replace it).',
  },

  // Expansion of configurations and templates.
  INVALID_CONFIGURATION: {
    category: 'invalid-input',
    meaning: 'A configuration (resources, imports) has the wrong form.',
  },
  INVALID_RESOURCE: { category: 'invalid-input', meaning: 'A resource of a configuration is not a mapping.' },
  INVALID_PROPERTIES: {
    category: 'invalid-input',
    meaning: 'The properties of a resource are not a mapping.',
  },
  RESOURCE_NAME_MISSING: { category: 'invalid-input', meaning: 'A resource has no name.' },
  RESOURCE_TYPE_MISSING: { category: 'invalid-input', meaning: 'A resource has no type.' },
  DUPLICATE_RESOURCE_NAME: {
    category: 'invalid-input',
    meaning: 'Two resources of one configuration have the same name.',
  },
  IMPORT_NOT_FOUND: { category: 'not-found', meaning: 'An import of a configuration does not exist.' },
  IMPORT_OUTSIDE: {
    category: ['invalid-input', 'blocked'],
    meaning: "An import lies (or links) outside the configuration's directory.",
  },
  IMPORT_TOO_LARGE: { category: 'limit', meaning: 'An import is larger than allowed.' },
  NOT_A_TEMPLATE: {
    category: 'invalid-input',
    meaning: 'A reference names a blueprint where a template is needed.',
  },
  INVALID_SCHEMA: { category: 'invalid-input', meaning: "A template's schema is malformed." },
  SCHEMA_VALIDATION_FAILED: {
    category: 'validation',
    meaning: "Properties do not match the template's schema.",
  },
  TEMPLATE_NO_RESOURCES: {
    category: 'invalid-input',
    meaning: "A template did not return a 'resources' field.",
  },
  TEMPLATE_INVALID_OUTPUTS: {
    category: 'invalid-input',
    meaning: "A template's 'outputs' is not a list of {name, value}.",
  },
  TEMPLATE_CYCLE: { category: 'invalid-input', meaning: 'Templates instantiate each other in a cycle.' },
  EXPANSION_TOO_DEEP: { category: 'limit', meaning: 'Expansion nests deeper than allowed.' },
  TOO_MANY_TEMPLATES: { category: 'limit', meaning: 'Expansion renders more templates than allowed.' },
  TEMPLATE_LIMIT: { category: 'limit', meaning: 'A template hit a time, memory or output limit.' },
  TEMPLATE_BLOCKED: {
    category: 'blocked',
    meaning: 'A template tried something forbidden in templates (files, network, imports).',
  },
  JINJA_ERROR: {
    category: ['invalid-input', 'error', 'validation'],
    meaning: 'A Jinja template failed to compile or to render.',
  },
  PYTHON_TEMPLATE_ERROR: {
    category: ['invalid-input', 'error', 'validation'],
    meaning: 'A Python template failed to compile or to run.',
  },
  PYTHON_NOT_FOUND: {
    category: 'not-found',
    meaning: 'The Python interpreter for Python templates cannot be started.',
  },
  SANDBOX_FAILED: { category: 'error', meaning: 'The template renderer process failed.' },
  AGENT_UNAVAILABLE: {
    category: ['error', 'usage'],
    meaning:
      '`dm agent start` cannot start the expansion agent (turned off, its directory not private, or it did not start).',
  },
  PYTHON_ISOLATION_UNAVAILABLE: {
    category: 'blocked',
    meaning: "A registry's Python template needs namespaces, which this machine refused.",
  },
  UNKNOWN_REFERENCE: {
    category: 'validation',
    meaning: 'A $(ref.NAME…) names a resource the configuration does not have.',
  },
  REFERENCE_CYCLE: { category: 'validation', meaning: 'Resource references form a cycle.' },

  // Registry checks.
  LINT_FAILED: { category: 'validation', meaning: '`dm lint` found errors.' },
  NO_TEMPLATES: { category: 'invalid-input', meaning: '`dm lint` found no templates in the directory.' },

  // Blueprints.
  NOT_A_BLUEPRINT: { category: 'invalid-input', meaning: 'The input is not a blueprint.' },
  BLUEPRINT_TOO_LARGE: {
    category: 'limit',
    meaning: 'A blueprint directory has more files or bytes than allowed.',
  },
  INVALID_IMPORTS: {
    category: 'invalid-input',
    meaning: 'Blueprint imports or a blueprint file map have the wrong form.',
  },
  INVALID_DEPLOY_ITEM: {
    category: 'invalid-input',
    meaning: 'A blueprint deploy item is not a list of Kubernetes objects.',
  },

  // Blueprints: the phase a failure occurs in is its code (docs/blueprints.md "Commands"). A failure
  // inside an execution or a schema validation keeps the category of what failed there (a limit, a
  // blocked call, …).
  schema: {
    category: VALIDATION_FIRST,
    meaning: "A blueprint's import schema is invalid or an import does not match it.",
  },
  imports: {
    category: VALIDATION_FIRST,
    meaning: 'Blueprint imports are missing or do not match their definitions.',
  },
  importExecutions: { category: INVALID_INPUT_FIRST, meaning: 'A blueprint import execution failed.' },
  subinstallationExecutions: {
    category: INVALID_INPUT_FIRST,
    meaning: 'A blueprint subinstallation execution failed.',
  },
  deployExecutions: { category: INVALID_INPUT_FIRST, meaning: 'A blueprint deploy execution failed.' },
  exportExecutions: { category: INVALID_INPUT_FIRST, meaning: 'A blueprint export execution failed.' },
  template: {
    category: INVALID_INPUT_FIRST,
    meaning: 'A template function called by a blueprint execution failed.',
  },
  subinstallations: {
    category: VALIDATION_FIRST,
    meaning: 'A blueprint subinstallation is invalid or names a blueprint that cannot be found.',
  },
  deployItems: { category: VALIDATION_FIRST, meaning: 'A blueprint deploy item is invalid.' },
  exports: {
    category: VALIDATION_FIRST,
    meaning: 'Blueprint exports are missing or do not match their definitions.',
  },

  // Deployments.
  NOTHING_TO_DEPLOY: {
    category: 'validation',
    meaning:
      'The input is empty, has no resources, or holds neither a configuration nor Kubernetes objects: deploying it would prune the deployment.',
  },
  UNKNOWN_CONFIGURATION_KEY: {
    category: 'validation',
    meaning: 'A configuration to deploy has a top-level key other than imports, resources and outputs.',
  },
  PRUNE_REFUSED: {
    category: 'conflict',
    meaning:
      'A deploy would delete every object of the deployment, or more than half of them, and --prune-all (pruneAll) was not given.',
  },
  MIXED_DOCUMENTS: {
    category: 'invalid-input',
    meaning: 'The input mixes configurations and Kubernetes objects.',
  },
  INVALID_PRIMITIVE_TYPE: { category: 'validation', meaning: 'A resource type is not a Kubernetes kind.' },
  UNKNOWN_KIND: { category: 'validation', meaning: 'A resource type is unknown to the cluster.' },
  DUPLICATE_OBJECT: { category: 'validation', meaning: 'Two resources are the same Kubernetes object.' },
  DEPLOYMENT_NOT_FOUND: { category: 'not-found', meaning: 'The deployment does not exist.' },
  DEPLOYMENT_EXISTS: { category: 'conflict', meaning: 'The deployment already exists.' },
  DEPLOYMENT_BUSY: { category: 'conflict', meaning: 'Another dm process is changing the deployment.' },
  DEPLOYMENT_TARGET_CHANGED: {
    category: 'conflict',
    meaning: 'The deployment lives in another cluster or namespace.',
  },
  DEPLOY_FAILED: { category: 'error', meaning: 'Applying the deployment failed for some resources.' },
  MANIFEST_NOT_FOUND: { category: 'not-found', meaning: 'The deployment has no such manifest.' },
  OPERATION_NOT_FOUND: { category: 'not-found', meaning: 'The Deployment Manager has no such operation.' },
  CLUSTER_UNREACHABLE: {
    category: 'unreachable',
    meaning: 'The cluster cannot be reached: nothing answered (connection refused, no such host, timeout).',
  },
  CLUSTER_UNAUTHORIZED: {
    category: 'unauthorized',
    meaning:
      "The cluster answered and refused the kubeconfig context's credentials (kubectl: You must be logged in to the server).",
  },
  CLUSTER_FORBIDDEN: {
    category: 'forbidden',
    meaning:
      "The cluster answered and its RBAC refused what the kubeconfig context's user asked (Error from server (Forbidden)).",
  },
  CLUSTER_DISCOVERY_FAILED: {
    category: 'unreachable',
    meaning: 'kubectl could not list the API resources of the cluster.',
  },
  CLUSTER_READ_FAILED: {
    category: ['unreachable', 'error'],
    meaning: 'kubectl could not read objects from the cluster.',
  },
  KUBECONFIG_INVALID: {
    category: 'unreachable',
    meaning: 'The kubeconfig or context is missing or unusable.',
  },
  KUBECTL_NOT_FOUND: { category: 'unreachable', meaning: 'kubectl cannot be run.' },
  UNKNOWN_CLUSTER: {
    category: 'invalid-input',
    meaning: 'The Deployment Manager has no cluster of that name.',
  },
  MANAGER_NOT_CONFIGURED: { category: 'not-found', meaning: 'The server hosts no Deployment Manager.' },
  MANAGER_UNREACHABLE: { category: 'unreachable', meaning: 'The Deployment Manager cannot be reached.' },
  MANAGER_BAD_ANSWER: { category: 'unreachable', meaning: 'The Deployment Manager answered without JSON.' },
  STATE_UNREADABLE: { category: 'error', meaning: 'The local deployments database cannot be opened.' },
  MIGRATIONS_NOT_FOUND: {
    category: 'error',
    meaning: 'The database migrations folder is missing from the installation.',
  },

  // Merging and layering: cloud-init's exception classes and Deckhand's error kinds (docs/merging.md, docs/layering.md).
  ValueError: {
    category: ['invalid-input', 'usage'],
    meaning:
      'A merge specification or user-data part cannot be used (cloud-init ValueError); a usage error in --merge-how.',
  },
  ImportError: {
    category: ['invalid-input', 'usage'],
    meaning:
      'A merge specification names an unknown merger (cloud-init ImportError); a usage error in --merge-how.',
  },
  KeyError: {
    category: ['invalid-input', 'usage'],
    meaning: 'A merge failed on a missing key (cloud-init KeyError); a usage error in --merge-how.',
  },
  TypeError: {
    category: ['invalid-input', 'usage'],
    meaning: 'A merge met a value of the wrong type (cloud-init TypeError); a usage error in --merge-how.',
  },
  IndexError: {
    category: ['invalid-input', 'usage'],
    meaning:
      'A list-form merge specification is malformed (cloud-init IndexError); a usage error in --merge-how.',
  },
  AttributeError: {
    category: ['invalid-input', 'usage'],
    meaning:
      'A list-form merge specification is malformed (cloud-init AttributeError); a usage error in --merge-how.',
  },
  InvalidDocumentFormat: { category: 'validation', meaning: 'A layering document fails the format checks.' },
  LayeringPolicyNotFound: {
    category: 'conflict',
    meaning: 'Layered documents exist but no LayeringPolicy does.',
  },
  InvalidDocumentLayer: {
    category: 'invalid-input',
    meaning: "A document's layer is not in the LayeringPolicy.",
  },
  InvalidDocumentParent: {
    category: 'invalid-input',
    meaning: "A document's parent is not in a layer above it.",
  },
  IndeterminateDocumentParent: {
    category: 'invalid-input',
    meaning: 'More than one document could be the parent.',
  },
  InvalidDocumentReplacement: {
    category: 'invalid-input',
    meaning: 'A replacement document is not allowed where it is.',
  },
  SubstitutionDependencyCycle: {
    category: 'invalid-input',
    meaning: 'Substitutions depend on each other in a cycle.',
  },
  UnsupportedActionMethod: { category: 'invalid-input', meaning: 'A layering action has an unknown method.' },
  MissingDocumentKey: {
    category: 'invalid-input',
    meaning: 'A layering action names a path its document lacks.',
  },
  SubstitutionSourceNotFound: {
    category: 'conflict',
    meaning: 'A substitution source document does not exist.',
  },
  SubstitutionSourceDataNotFound: {
    category: 'invalid-input',
    meaning: 'A substitution source lacks the data path named.',
  },
  UnknownSubstitutionError: {
    category: 'invalid-input',
    meaning: 'A substitution failed for another reason.',
  },
  EncryptionSourceNotFound: {
    category: 'invalid-input',
    meaning: 'An encrypted substitution source cannot be found.',
  },
  MissingDocumentPattern: {
    category: 'invalid-input',
    meaning: 'A substitution pattern does not occur in its destination.',
  },

  // The checksum log (docs/integrity.md).
  CHECKSUM_KEY_INVALID: {
    category: 'invalid-input',
    meaning: 'A log key (verifier or signer key text) is malformed.',
  },
  CHECKSUM_RECORD_INVALID: {
    category: 'invalid-input',
    meaning: 'A log record (`<template> <version> <digest>`) or a leaf hash to append is malformed.',
  },
  CHECKSUM_CHECKPOINT_INVALID: {
    category: 'invalid-input',
    meaning: 'A checkpoint or signed note is malformed (not a signature failure).',
  },
  CHECKSUM_CHECKPOINT_UNTRUSTED: {
    category: 'invalid-input',
    meaning: 'The checkpoint carries no signature by the trusted key (unsigned, or signed by another key).',
  },
  CHECKSUM_SIGNATURE_INVALID: {
    category: 'invalid-input',
    meaning: "The trusted key's signature on the checkpoint does not verify: the checkpoint was altered.",
  },
  CHECKSUM_PROOF_INVALID: {
    category: 'invalid-input',
    meaning: 'A proof is malformed (bad base64, wrong hash length, too many hashes).',
  },
  CHECKSUM_INCLUSION_FAILED: {
    category: 'conflict',
    meaning:
      "An inclusion proof does not lead to the checkpoint's root: the record is not in the log as shown.",
  },
  CHECKSUM_LOG_INCONSISTENT: {
    category: 'conflict',
    meaning: "A consistency proof fails: the log's history was rewritten (or the server shows a fork).",
  },
  CHECKSUM_MISMATCH: {
    category: 'conflict',
    meaning: "The log's record for a version has another digest than the one the client has.",
  },
  CHECKSUM_RANGE_INVALID: {
    category: 'invalid-input',
    meaning: 'An index or tree size outside the log (a proof asked beyond its end, sizes out of order).',
  },
  CHECKSUM_STORE_CONFLICT: {
    category: 'conflict',
    meaning: 'The hash store changed under a writer (two writers appended at once).',
  },
  CHECKSUM_RECORD_NOT_FOUND: {
    category: 'not-found',
    meaning: 'The checksum log has no record of the version asked for (never seen by this server).',
  },
  QUARANTINE_NOT_FOUND: {
    category: 'not-found',
    meaning: 'The version to accept is not quarantined (its content never changed, or was accepted).',
  },

  // The registry server (dm-registry) and its HTTP API.
  INVALID_REQUEST: { category: 'invalid-input', meaning: 'A request body has the wrong form.' },
  INVALID_PARAMETER: { category: 'invalid-input', meaning: 'A query parameter is out of range.' },
  TOO_MANY_REFERENCES: {
    category: 'invalid-input',
    meaning: 'A batch request names more references than allowed.',
  },
  BODY_TOO_LARGE: { category: 'limit', meaning: 'A request body is larger than allowed.' },
  UNAUTHORIZED: {
    category: 'unauthorized',
    meaning: 'The request needs a token and has none (or an unknown one).',
  },
  FORBIDDEN: { category: 'forbidden', meaning: "The request's token does not give the right needed." },
  INVALID_SIGNATURE: { category: 'unauthorized', meaning: 'A webhook signature does not verify.' },
  TOKEN_NOT_FOUND: { category: 'not-found', meaning: 'No such token.' },
  INVALID_CREDENTIAL: {
    category: 'invalid-input',
    meaning: 'A credential name or value has the wrong form.',
  },
  CREDENTIAL_NOT_FOUND: {
    category: ['invalid-input', 'error'],
    meaning: 'A registry names a credential that does not exist.',
  },
  SECRET_UNREADABLE: {
    category: 'error',
    meaning: 'A stored secret cannot be decrypted with the configured key.',
  },
  DATABASE_UNREACHABLE: { category: 'unreachable', meaning: 'The database cannot be opened or reached.' },
  DATABASE_UNAVAILABLE: {
    category: 'unreachable',
    meaning: 'The database is busy or failing while serving a request; retry shortly.',
  },
  NOT_READY: { category: 'unreachable', meaning: 'The database migrations are not applied yet.' },
  SYNC_TIMEOUT: { category: 'unreachable', meaning: 'A registry sync did not finish in time.' },
  SYNC_FAILED: {
    category: 'error',
    meaning: 'A registry sync failed for a reason that is not a dm error (in sync history).',
  },
  STORE_INCONSISTENT: { category: 'error', meaning: "The store's record of a blob disagrees with the blob." },
  INVALID_KEY: { category: 'invalid-input', meaning: 'A bundle key file is not an Ed25519 key in PEM form.' },
  INVALID_BUNDLE: {
    category: 'invalid-input',
    meaning: 'A bundle is malformed, truncated, or fails verification.',
  },
  BUNDLE_SIGNATURE: {
    category: 'invalid-input',
    meaning:
      'A bundle is unsigned though --verify-key asks for a signature, or its signature does not verify.',
  },
  BUNDLE_BASE_MISSING: {
    category: 'invalid-input',
    meaning: 'A delta bundle needs content of its base bundle that the database lacks.',
  },
  BUNDLE_REGISTRY_NOT_BUNDLED: {
    category: 'conflict',
    meaning:
      'A bundle would add versions to a registry this server indexes from its own source (or pulls through); only registries that came from bundles take them, unless --into-indexed-registries says so.',
  },
  UPSTREAM_UNAVAILABLE: { category: 'upstream', meaning: "A mirror's upstream registry is down or failing." },
  UPSTREAM_TIMEOUT: {
    category: 'upstream-timeout',
    meaning: "An upstream (a mirror's upstream registry, GitHub) did not answer within its time limit.",
  },
  UPSTREAM_INVALID_ANSWER: {
    category: 'upstream',
    meaning: "An upstream (a mirror's upstream registry, GitHub) answered something dm cannot use.",
  },
  UPSTREAM_CHECKSUM_MISMATCH: {
    category: 'upstream',
    meaning:
      "A mirror's upstream answered a version digest its own checksum log does not confirm (the mirror knows the log's key); nothing was stored.",
  },
  UPSTREAM_NOT_A_REGISTRY: {
    category: 'upstream',
    meaning: "A mirror's upstream is not a dm registry server.",
  },
  UPSTREAM_ANSWER_TOO_LARGE: {
    category: 'upstream',
    meaning: "A mirror's upstream sent an answer larger than allowed.",
  },
  UPSTREAM_REGISTRY_NOT_FOUND: {
    category: 'upstream',
    meaning: "A mirrored registry's upstream serves no registry of that name (to the mirror's token).",
  },
  UPSTREAM_NOT_CONFIGURED: {
    category: 'usage',
    meaning: 'A registry mirrors an upstream that is not an --upstream of this server.',
  },
  URL_NOT_FETCHED: {
    category: 'unreachable',
    meaning: 'A plain URL reference was met where nothing fetches URLs (only dm install and expansion do).',
  },
  INDEX_BUILD_FAILED: {
    category: ['error', 'limit'],
    meaning:
      "The worker building a registry's index stopped (out of its memory, or crashed); the sync failed.",
  },
  INDEX_SWAP_FAILED: {
    category: ['error', 'limit'],
    meaning:
      "The worker writing a registry's new index into the SQLite file stopped (out of its memory, killed) before its transaction committed; the sync failed and the previous index is kept.",
  },
  INVALID_ORGANISATION: {
    category: INVALID_INPUT_FIRST,
    meaning: 'An organisation name is malformed, or a token names too many organisations.',
  },
  INVALID_HOST: {
    category: 'usage',
    meaning:
      '`dm-registry start --host` (or DM_REGISTRY_HOST) is not an address or host name of this machine.',
  },
  SERVER_BUSY: {
    category: 'unreachable',
    meaning:
      'The server already runs and queues as much of this kind of work (webhook deliveries, batch resolves, expansions) as it allows; retry after Retry-After seconds.',
  },
  CALLER_BUSY: {
    category: 'rate-limited',
    meaning:
      'This caller already has as many batch requests in progress as one caller may; retry after Retry-After seconds.',
  },
  ANSWER_TIMEOUT: {
    category: 'unreachable',
    meaning:
      "A streamed answer (a batch resolve) was not taken by its client within the server's write deadline; the server closed the connection.",
  },
  EXPANSION_TOO_LARGE: {
    category: 'limit',
    meaning:
      'An expansion sent to the Deployment Manager needed more memory than the server gives one expansion.',
  },
  REMOTE_ERROR: {
    category: ALL_CATEGORIES,
    meaning:
      'A server answered an error without a code dm knows; the category follows its HTTP status, and details.status holds it.',
  },
  INTERNAL: { category: 'error', meaning: 'A bug in dm: please report it with the command that caused it.' },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

type Listed<T> = T extends readonly (infer E)[] ? E : T;

/** The categories a call site may give an error of code `C`. */
export type CategoryOf<C extends ErrorCode> = Listed<(typeof ERROR_CODES)[C]['category']>;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** The categories of `code`, default first. */
export function categoriesOf(code: ErrorCode): readonly ErrorCategory[] {
  const category: ErrorCodeEntry['category'] = ERROR_CODES[code].category;
  return typeof category === 'string' ? [category] : category;
}
