/**
 * A GitHub REST API stand-in for tests and benches: serves git repositories on disk through the
 * endpoints dm-registry's GitHub source uses — repos, branches, commits (ETag / 304), git trees
 * (recursive, `truncated` past a configurable size), blobs, tarball (302 to a download host path)
 * — with rate-limit headers, injected 403/429 rate-limit answers, 404s, and private repositories
 * that need a token. Response bodies follow GitHub's OpenAPI description; standin.test.ts checks
 * them against @octokit/openapi so this cannot drift from GitHub.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandinRepo {
  /** A git repository (work tree or bare) on disk. */
  gitDir: string;
  private?: boolean;
  defaultBranch?: string;
  /** Answer this instead of `git archive` for tarballs (hostile archives). */
  tarball?: Buffer;
}

export interface StandinOptions {
  /** `owner/repo` → repository. */
  repos: Record<string, StandinRepo>;
  /** Tokens that may read private repositories. */
  tokens?: string[];
  /** Requests allowed per window (default 5000). */
  rateLimit?: number;
  /** Recursive trees with more entries than this come back `truncated` (GitHub: 100,000). */
  maxTreeEntries?: number;
  /** …or larger than this many bytes of JSON (GitHub: 7 MB). */
  maxTreeBytes?: number;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

export interface Standin {
  /** The API base URL to configure (`baseUrl`). */
  url: string;
  requests: LoggedRequest[];
  /** The next `count` API requests are answered with a rate-limit error. */
  injectRateLimit(kind: 'primary' | 'secondary', count?: number, retryAfterSeconds?: number): void;
  /** Remaining budget of the current window. */
  remaining(): number;
  close(): Promise<void>;
}

function git(gitDir: string, args: string[]): Buffer {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 1024 * 1024 * 1024 });
}

function gitDirOf(path: string): string {
  return execFileSync('git', ['-C', path, 'rev-parse', '--absolute-git-dir']).toString().trim();
}

const EPOCH = '2026-01-01T00:00:00Z';

function user(base: string, login: string) {
  return {
    login,
    id: 1,
    node_id: 'MDQ6VXNlcjE=',
    avatar_url: `${base}/avatars/${login}`,
    gravatar_id: '',
    url: `${base}/users/${login}`,
    html_url: `${base}/${login}`,
    followers_url: `${base}/users/${login}/followers`,
    following_url: `${base}/users/${login}/following{/other_user}`,
    gists_url: `${base}/users/${login}/gists{/gist_id}`,
    starred_url: `${base}/users/${login}/starred{/owner}{/repo}`,
    subscriptions_url: `${base}/users/${login}/subscriptions`,
    organizations_url: `${base}/users/${login}/orgs`,
    repos_url: `${base}/users/${login}/repos`,
    events_url: `${base}/users/${login}/events{/privacy}`,
    received_events_url: `${base}/users/${login}/received_events`,
    type: 'User',
    site_admin: false,
  };
}

export function repositoryBody(base: string, owner: string, name: string, repo: StandinRepo) {
  const api = `${base}/repos/${owner}/${name}`;
  const html = `${base}/${owner}/${name}`;
  const urls: Record<string, string> = {};
  for (const key of [
    'archive_url:/{archive_format}{/ref}',
    'assignees_url:/assignees{/user}',
    'blobs_url:/git/blobs{/sha}',
    'branches_url:/branches{/branch}',
    'collaborators_url:/collaborators{/collaborator}',
    'comments_url:/comments{/number}',
    'commits_url:/commits{/sha}',
    'compare_url:/compare/{base}...{head}',
    'contents_url:/contents/{+path}',
    'contributors_url:/contributors',
    'deployments_url:/deployments',
    'downloads_url:/downloads',
    'events_url:/events',
    'forks_url:/forks',
    'git_commits_url:/git/commits{/sha}',
    'git_refs_url:/git/refs{/sha}',
    'git_tags_url:/git/tags{/sha}',
    'hooks_url:/hooks',
    'issue_comment_url:/issues/comments{/number}',
    'issue_events_url:/issues/events{/number}',
    'issues_url:/issues{/number}',
    'keys_url:/keys{/key_id}',
    'labels_url:/labels{/name}',
    'languages_url:/languages',
    'merges_url:/merges',
    'milestones_url:/milestones{/number}',
    'notifications_url:/notifications{?since,all,participating}',
    'pulls_url:/pulls{/number}',
    'releases_url:/releases{/id}',
    'stargazers_url:/stargazers',
    'statuses_url:/statuses/{sha}',
    'subscribers_url:/subscribers',
    'subscription_url:/subscription',
    'tags_url:/tags',
    'teams_url:/teams',
    'trees_url:/git/trees{/sha}',
  ]) {
    const [k, suffix] = key.split(':') as [string, string];
    urls[k] = `${api}${suffix}`;
  }
  return {
    id: 1,
    node_id: 'MDEwOlJlcG9zaXRvcnkx',
    name,
    full_name: `${owner}/${name}`,
    owner: user(base, owner),
    private: repo.private ?? false,
    html_url: html,
    description: null,
    fork: false,
    url: api,
    ...urls,
    clone_url: `${html}.git`,
    git_url: `git://stand-in/${owner}/${name}.git`,
    ssh_url: `git@stand-in:${owner}/${name}.git`,
    svn_url: html,
    mirror_url: null,
    homepage: null,
    language: null,
    forks: 0,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 0,
    default_branch: repo.defaultBranch ?? 'main',
    open_issues_count: 0,
    open_issues: 0,
    has_issues: false,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    archived: false,
    disabled: false,
    license: null,
    pushed_at: EPOCH,
    created_at: EPOCH,
    updated_at: EPOCH,
    network_count: 0,
    subscribers_count: 0,
  };
}

export function commitBody(
  base: string,
  owner: string,
  name: string,
  sha: string,
  treeSha: string,
  parents: string[],
) {
  const api = `${base}/repos/${owner}/${name}`;
  const person = { name: 'Stand In', email: 'stand-in@example.com', date: EPOCH };
  return {
    url: `${api}/commits/${sha}`,
    sha,
    node_id: `C_${sha.slice(0, 20)}`,
    html_url: `${base}/${owner}/${name}/commit/${sha}`,
    comments_url: `${api}/commits/${sha}/comments`,
    commit: {
      url: `${api}/git/commits/${sha}`,
      author: person,
      committer: person,
      message: 'stand-in commit',
      comment_count: 0,
      tree: { sha: treeSha, url: `${api}/git/trees/${treeSha}` },
    },
    author: user(base, owner),
    committer: user(base, owner),
    parents: parents.map((p) => ({
      sha: p,
      url: `${api}/commits/${p}`,
      html_url: `${base}/${owner}/${name}/commit/${p}`,
    })),
    files: [],
    stats: { additions: 0, deletions: 0, total: 0 },
  };
}

export async function startGitHubStandin(options: StandinOptions): Promise<Standin> {
  const requests: LoggedRequest[] = [];
  const limit = options.rateLimit ?? 5000;
  let used = 0;
  let windowReset = Math.floor(Date.now() / 1000) + 3600;
  const injected: { kind: 'primary' | 'secondary'; retryAfter: number }[] = [];
  let base = '';
  const archives = new Map<string, Buffer>();

  const rateHeaders = (res: ServerResponse) => {
    const now = Math.floor(Date.now() / 1000);
    if (now >= windowReset) {
      used = 0;
      windowReset = now + 3600;
    }
    res.setHeader('x-ratelimit-limit', String(limit));
    res.setHeader('x-ratelimit-remaining', String(Math.max(0, limit - used)));
    res.setHeader('x-ratelimit-reset', String(windowReset));
    res.setHeader('x-ratelimit-used', String(used));
    res.setHeader('x-ratelimit-resource', 'core');
  };

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '', status });
    if (body === undefined) {
      res.writeHead(status);
      res.end();
      return;
    }
    if (Buffer.isBuffer(body)) {
      res.writeHead(status, { 'content-length': String(body.length) });
      res.end(body);
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
    });
    res.end(text);
  };

  const notFound = (req: IncomingMessage, res: ServerResponse) =>
    send(req, res, 404, {
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest',
      status: '404',
    });

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    const path = url.pathname;

    // The download host (codeload): no API rate limit, no token (GitHub puts one in the URL).
    const codeload = /^\/_codeload\/([^/]+)\/([^/]+)\/legacy\.tar\.gz\/([0-9a-f]{40})$/.exec(path);
    if (codeload) {
      const repo = options.repos[`${codeload[1]}/${codeload[2]}`];
      if (!repo) return notFound(req, res);
      const sha = codeload[3]!;
      const key = `${codeload[1]}/${codeload[2]}@${sha}`;
      let body = repo.tarball ?? archives.get(key);
      if (!body) {
        const prefix = `--prefix=${codeload[1]}-${codeload[2]}-${sha.slice(0, 7)}/`;
        body = git(gitDirOf(repo.gitDir), ['archive', '--format=tar.gz', prefix, sha]);
        // GitHub keeps archives ready too: built once per commit.
        archives.set(key, body);
      }
      return send(req, res, 200, body, { 'content-type': 'application/x-gzip' });
    }

    rateHeaders(res);
    const fault = injected.shift();
    if (fault) {
      used++;
      if (fault.kind === 'primary') {
        res.setHeader('x-ratelimit-remaining', '0');
        res.setHeader('x-ratelimit-reset', String(Math.floor(Date.now() / 1000) + fault.retryAfter));
        return send(req, res, 403, {
          message: 'API rate limit exceeded for 127.0.0.1.',
          documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
        });
      }
      return send(
        req,
        res,
        429,
        {
          message:
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/rest',
        },
        { 'retry-after': String(fault.retryAfter) },
      );
    }
    if (used >= limit) {
      return send(req, res, 403, {
        message: 'API rate limit exceeded.',
        documentation_url: 'https://docs.github.com/rest',
      });
    }

    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) {
      used++;
      return notFound(req, res);
    }
    const [, owner, name] = m as unknown as [string, string, string];
    const rest = m[3] ?? '';
    const repo = options.repos[`${owner}/${name}`];
    const auth = /^(?:token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (auth !== undefined && !(options.tokens ?? []).includes(auth)) {
      used++;
      return send(req, res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
    if (!repo || (repo.private && auth === undefined)) {
      used++;
      return notFound(req, res);
    }
    const gitDir = gitDirOf(repo.gitDir);
    const resolveRef = (ref: string): string | undefined => {
      try {
        return git(gitDir, ['rev-parse', '--verify', '--quiet', `${ref === 'HEAD' ? 'HEAD' : ref}^{commit}`])
          .toString()
          .trim();
      } catch {
        return undefined;
      }
    };

    if (rest === '') {
      used++;
      return send(req, res, 200, repositoryBody(base, owner, name, repo));
    }
    let r = /^\/commits\/(.+)$/.exec(rest);
    if (r) {
      const sha = resolveRef(decodeURIComponent(r[1]!));
      if (!sha) {
        used++;
        return send(req, res, 422, {
          message: `No commit found for SHA: ${r[1]}`,
          documentation_url: 'https://docs.github.com/rest',
        });
      }
      const etag = `"${createHash('sha256').update(sha).digest('hex')}"`;
      const given = req.headers['if-none-match'];
      if (given && given.replace(/^W\//, '') === etag) {
        // Conditional requests answered 304 do not count against the rate limit.
        return send(req, res, 304, undefined, { etag });
      }
      used++;
      const [treeSha = '', ...parents] = git(gitDir, ['show', '-s', '--format=%T %P', sha])
        .toString()
        .trim()
        .split(' ');
      return send(req, res, 200, commitBody(base, owner, name, sha, treeSha, parents.filter(Boolean)), {
        etag,
      });
    }
    r = /^\/branches\/(.+)$/.exec(rest);
    if (r) {
      used++;
      const branch = decodeURIComponent(r[1]!);
      const sha = resolveRef(`refs/heads/${branch}`);
      if (!sha) return notFound(req, res);
      const [treeSha = '', ...parents] = git(gitDir, ['show', '-s', '--format=%T %P', sha])
        .toString()
        .trim()
        .split(' ');
      return send(req, res, 200, {
        name: branch,
        commit: commitBody(base, owner, name, sha, treeSha, parents.filter(Boolean)),
        _links: {
          html: `${base}/${owner}/${name}/tree/${branch}`,
          self: `${base}/repos/${owner}/${name}/branches/${branch}`,
        },
        protected: false,
        protection: {
          enabled: false,
          required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] },
        },
        protection_url: `${base}/repos/${owner}/${name}/branches/${branch}/protection`,
      });
    }
    r = /^\/git\/trees\/([0-9a-f]{40})$/.exec(rest);
    if (r) {
      used++;
      const sha = r[1]!;
      const recursive = url.searchParams.has('recursive');
      let listing: string;
      try {
        listing = git(gitDir, ['ls-tree', ...(recursive ? ['-r', '-t'] : []), '-l', '-z', sha]).toString(
          'utf8',
        );
      } catch {
        return notFound(req, res);
      }
      const tree = listing
        .split('\0')
        .filter(Boolean)
        .map((record) => {
          const tab = record.indexOf('\t');
          const [mode = '', type = '', objectSha = '', size = ''] = record.slice(0, tab).split(/ +/);
          const entryPath = record.slice(tab + 1);
          const api = `${base}/repos/${owner}/${name}/git/${type === 'tree' ? 'trees' : 'blobs'}/${objectSha}`;
          return {
            path: entryPath,
            mode,
            type,
            sha: objectSha,
            ...(type === 'blob' ? { size: Number(size) } : {}),
            url: api,
          };
        });
      let max = options.maxTreeEntries ?? 100_000;
      const maxBytes = options.maxTreeBytes ?? 7 * 1024 * 1024;
      const bytes = JSON.stringify(tree).length;
      if (bytes > maxBytes) max = Math.min(max, Math.floor((tree.length * maxBytes) / bytes));
      const truncated = tree.length > max;
      return send(req, res, 200, {
        sha,
        url: `${base}/repos/${owner}/${name}/git/trees/${sha}`,
        tree: truncated ? tree.slice(0, max) : tree,
        truncated,
      });
    }
    r = /^\/git\/blobs\/([0-9a-f]{40})$/.exec(rest);
    if (r) {
      used++;
      let content: Buffer;
      try {
        content = git(gitDir, ['cat-file', 'blob', r[1]!]);
      } catch {
        return notFound(req, res);
      }
      return send(req, res, 200, {
        sha: r[1],
        node_id: `B_${r[1]!.slice(0, 20)}`,
        size: content.length,
        url: `${base}/repos/${owner}/${name}/git/blobs/${r[1]}`,
        content: (content.toString('base64').match(/.{1,60}/g) ?? []).join('\n'),
        encoding: 'base64',
      });
    }
    r = /^\/tarball\/(.+)$/.exec(rest);
    if (r) {
      used++;
      const sha = resolveRef(decodeURIComponent(r[1]!));
      if (!sha) return notFound(req, res);
      return send(req, res, 302, undefined, {
        location: `${base}/_codeload/${owner}/${name}/legacy.tar.gz/${sha}`,
      });
    }
    used++;
    return notFound(req, res);
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      send(req, res, 500, { message: (error as Error).message });
    }
  });
  // No idle timeout on kept-alive connections: a client whose event loop was busy past it (this
  // stand-in usually runs inside the test process) sends its next request on a connection the
  // stand-in is closing right then, and fetch fails with "other side closed". close() ends them.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    injectRateLimit(kind, count = 1, retryAfterSeconds = 1) {
      for (let i = 0; i < count; i++) injected.push({ kind, retryAfter: retryAfterSeconds });
    },
    remaining: () => Math.max(0, limit - used),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Commits a directory's files into a new git repository at `repoDir` (branch main); returns the commit. */
export function commitDirectory(sourceDir: string, repoDir: string): string {
  execFileSync('git', ['init', '--quiet', '--initial-branch=main', repoDir]);
  execFileSync('cp', ['-R', `${sourceDir}/.`, repoDir]);
  return commitAll(repoDir, 'import');
}

/** Commits everything in a work tree; returns the commit. */
export function commitAll(repoDir: string, message: string): string {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Stand In',
    GIT_AUTHOR_EMAIL: 'stand-in@example.com',
    GIT_COMMITTER_NAME: 'Stand In',
    GIT_COMMITTER_EMAIL: 'stand-in@example.com',
  };
  execFileSync('git', ['-C', repoDir, 'add', '-A'], { env });
  execFileSync('git', ['-C', repoDir, 'commit', '--quiet', '--allow-empty', '-m', message], { env });
  return execFileSync('git', ['-C', repoDir, 'rev-parse', 'HEAD']).toString().trim();
}

/** Rewrites the last commit with what the working tree holds (what a force-push does to a branch). */
export function amendLastCommit(repoDir: string): void {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Mallory',
    GIT_AUTHOR_EMAIL: 'mallory@example.com',
    GIT_COMMITTER_NAME: 'Mallory',
    GIT_COMMITTER_EMAIL: 'mallory@example.com',
  };
  execFileSync('git', ['-C', repoDir, 'add', '-A'], { env });
  execFileSync('git', ['-C', repoDir, 'commit', '--quiet', '--amend', '--no-edit'], { env });
}
