/**
 * Who a request is (spec/server.md §2, §5): no token (public registries only), a read token (its
 * registry, or all), an admin token (everything, and the writes). Tokens are looked up by their
 * sha256 in memory; the table is reloaded when a token is created.
 */
import { DmError } from '../../../client/src/error.js';
import type { Access, RegistryView } from '../resolve/catalog.js';
import type { Store } from '../store/db.js';
import { hashToken } from '../store/secrets.js';

interface TokenGrant {
  role: 'admin' | 'read';
  registryId: number | null;
}

export interface RequestAccess extends Access {
  admin: boolean;
  /** The registry ids a read token allows (null: all), for SQL filters. */
  readable(): { all: boolean; ids: number[] };
}

const ANONYMOUS: RequestAccess = {
  admin: false,
  canRead: (r) => r.visibility !== 'private',
  readable: () => ({ all: false, ids: [] }),
};

export class TokenBook {
  private grants: Map<string, TokenGrant[]> | undefined;
  private readonly adminHashes: Set<string>;

  constructor(
    private readonly store: Store,
    adminTokens: readonly string[] = [],
  ) {
    this.adminHashes = new Set(adminTokens.filter((t) => t.length > 0).map(hashToken));
  }

  invalidate(): void {
    this.grants = undefined;
  }

  private load(): Map<string, TokenGrant[]> {
    if (!this.grants) {
      const map = new Map<string, TokenGrant[]>();
      const rows = this.store.sqlite
        .prepare('SELECT hash, role, registry_id AS registryId FROM tokens')
        .all() as ({
        hash: string;
      } & TokenGrant)[];
      for (const row of rows) {
        const list = map.get(row.hash) ?? [];
        list.push({ role: row.role, registryId: row.registryId });
        map.set(row.hash, list);
      }
      this.grants = map;
    }
    return this.grants;
  }

  /** The access of an `Authorization` header value; a present but unknown token is rejected. */
  accessFor(authorization: string | undefined): RequestAccess {
    if (!authorization) return ANONYMOUS;
    const hash = hashToken(bearerToken(authorization));
    if (this.adminHashes.has(hash)) return adminAccess();
    const grants = this.load().get(hash);
    if (!grants) throw new DmError('UNAUTHORIZED', 'the token is not valid', { category: 'unauthorized' });
    if (grants.some((g) => g.role === 'admin')) return adminAccess();
    const all = grants.some((g) => g.registryId === null);
    const ids = new Set(grants.flatMap((g) => (g.registryId === null ? [] : [g.registryId])));
    return {
      admin: false,
      canRead: (r: RegistryView) => r.visibility !== 'private' || all || ids.has(r.id),
      readable: () => ({ all, ids: [...ids] }),
    };
  }
}

/** The token of an `Authorization: Bearer <token>` header; another form is rejected. */
export function bearerToken(authorization: string): string {
  const match = /^(?:Bearer|token)\s+(\S+)$/i.exec(authorization);
  if (!match) {
    throw new DmError('UNAUTHORIZED', 'the Authorization header must be "Bearer <token>"', {
      category: 'unauthorized',
    });
  }
  return match[1]!;
}

function adminAccess(): RequestAccess {
  return { admin: true, canRead: () => true, readable: () => ({ all: true, ids: [] }) };
}

export function requireAdmin(access: RequestAccess): void {
  if (!access.admin) {
    throw new DmError('FORBIDDEN', 'this needs an admin token', {
      category: access === ANONYMOUS ? 'unauthorized' : 'forbidden',
    });
  }
}
