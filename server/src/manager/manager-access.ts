/**
 * Who may do what with deployments (docs/manager.md): the server's admin tokens may do everything;
 * manager tokens (`dm-registry token create --deploy SCOPE` / `--read-deployments SCOPE`) may read,
 * or read and change, deployments in their scopes — `cluster/namespace`, `cluster/*` or `*`.
 * Anonymous callers get 401 and see nothing; a token without deployment rights gets 403; a
 * deployment outside a token's read scope is answered 404, as if it did not exist.
 */
import { DmError } from '../../../client/src/error.js';
import type { OperationStore } from '../../../client/src/state/index.js';
import { bearerToken, type TokenBook } from '../api/access.js';
import { hashToken } from '../store/secrets.js';

export interface ManagerAccess {
  /** Who is asking, for the audit record: `admin` or `token:<id>`. */
  actor: string;
  admin: boolean;
  canRead(cluster: string, namespace: string): boolean;
  canDeploy(cluster: string, namespace: string): boolean;
  /** Whether the deploy rights cover every namespace of the cluster (cluster-scoped objects too). */
  clusterWide(cluster: string): boolean;
  /** Whether the token may change deployments anywhere (a read-deployments token may not). */
  deploysAnywhere: boolean;
}

const SCOPE = /^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?\/(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?))$/;

/** Checks a scope given on the command line: `cluster/namespace`, `cluster/*` or `*`. */
export function parseScope(text: string): string {
  const scope = text.includes('/') || text === '*' ? text : `${text}/*`;
  if (!SCOPE.test(scope)) {
    throw new DmError(
      'INVALID_SCOPE',
      `'${text}' is not a deployment scope (cluster/namespace, cluster/*, cluster or *)`,
      { category: 'usage' },
    );
  }
  return scope;
}

function covers(scopes: readonly string[], cluster: string, namespace: string): boolean {
  return scopes.some((s) => s === '*' || s === `${cluster}/*` || s === `${cluster}/${namespace}`);
}

const ADMIN: ManagerAccess = {
  actor: 'admin',
  admin: true,
  canRead: () => true,
  canDeploy: () => true,
  clusterWide: () => true,
  deploysAnywhere: true,
};

export async function managerAccessFor(
  authorization: string | undefined,
  deps: { tokens: TokenBook; operations: OperationStore },
): Promise<ManagerAccess> {
  if (!authorization) {
    throw new DmError('UNAUTHORIZED', 'deployments need a token (Authorization: Bearer <token>)', {
      category: 'unauthorized',
    });
  }
  const row = await deps.operations.tokenByHash(hashToken(bearerToken(authorization)));
  if (row) {
    const scopes = JSON.parse(row.scopes) as string[];
    const deploy = row.role === 'deploy';
    return {
      actor: `token:${row.id}`,
      admin: false,
      canRead: (c, n) => covers(scopes, c, n),
      canDeploy: (c, n) => deploy && covers(scopes, c, n),
      clusterWide: (c) => deploy && scopes.some((s) => s === '*' || s === `${c}/*`),
      deploysAnywhere: deploy && scopes.length > 0,
    };
  }
  const server = await deps.tokens.accessFor(authorization);
  if (server.admin) return ADMIN;
  throw new DmError('FORBIDDEN', 'this token has no rights on deployments', { category: 'forbidden' });
}

/**
 * A change (create, update, delete) by a token that may change no deployment at all is 403
 * before its body is read or the deployment looked up: never a 400 or a 409 first
 * (docs/manager.md, "Tokens").
 */
export function requireDeployRights(access: ManagerAccess): void {
  if (access.deploysAnywhere) return;
  throw new DmError('FORBIDDEN', 'this token may read deployments, not change them', {
    category: 'forbidden',
  });
}
