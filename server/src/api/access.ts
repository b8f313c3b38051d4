/**
 * Who a request is (docs/server.md, "Tokens"): no token (public registries only), a read token
 * (its registry, its organisations' registries, or all), an admin token (everything, and the
 * writes); the rule itself is store/visibility.ts's. Tokens are looked up by
 * their sha256 in memory, never with a query per request. `watch()` polls a fingerprint of the
 * table once a second (one cheap query, whatever the traffic), so a token revoked by the CLI or
 * another replica is refused within a second; an unknown token makes it check the fingerprint at
 * once (`recheck`), so a token just created works on the next request; expiry is checked in memory per request;
 * last use is collected in memory and written with the same tick.
 */
import { DmError } from '../../../client/src/error.js';
import type { Access, RegistryView } from '../resolve/catalog.js';
import type { Reader, TokenQueries } from '../store/contract.js';
import { hashToken } from '../store/secrets.js';
import { EVERY_REGISTRY, mayRead, organisationsOf, PUBLIC_READER } from '../store/visibility.js';

interface TokenGrant {
  id: number;
  role: 'admin' | 'read';
  registryId: number | null;
  organisations: string[];
  expiresAt: number | null;
}

export interface RequestAccess extends Access {
  admin: boolean;
  /** What the caller may read besides public registries, for SQL filters (store/visibility.ts). */
  readable(): Reader;
}

const ANONYMOUS: RequestAccess = {
  admin: false,
  canRead: (r) => mayRead(PUBLIC_READER, r),
  readable: () => PUBLIC_READER,
};

export class TokenBook {
  private grants: Map<string, TokenGrant[]> | undefined;
  /** The load in flight (one at a time; requests meanwhile wait for it). */
  private loading: Promise<Map<string, TokenGrant[]>> | undefined;
  private rounds = 0;
  private fingerprint: string | undefined;
  private readonly adminHashes: Set<string>;
  private readonly used = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: TokenQueries,
    adminTokens: readonly string[] = [],
    private readonly clock: () => number = Date.now,
  ) {
    this.adminHashes = new Set(adminTokens.filter((t) => t.length > 0).map(hashToken));
  }

  invalidate(): void {
    this.grants = undefined;
  }

  /** Reads the tokens again now (after a token is created or revoked here). */
  async reload(): Promise<void> {
    this.invalidate();
    await this.read();
  }

  /** Polls the table's fingerprint every `intervalMs` and writes last-use times; unref'd. */
  watch(intervalMs = 1000, onError?: (error: unknown) => void): void {
    if (this.timer) return;
    let ticking = false;
    this.timer = setInterval(() => {
      if (ticking) return;
      ticking = true;
      this.tick()
        .catch((error: unknown) => onError?.(error))
        .finally(() => {
          ticking = false;
        });
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops watching and writes the last-use times collected so far. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    try {
      await this.tick();
    } catch {
      // The database is going away with the server.
    }
  }

  /** One watch step: reload when the table changed; record last uses. */
  async tick(): Promise<void> {
    const now = await this.store.fingerprint();
    if (now !== this.fingerprint) this.grants = undefined;
    if (this.used.size) {
      const used = new Map(this.used);
      this.used.clear();
      await this.store.recordUsed(used);
    }
  }

  private load(): Map<string, TokenGrant[]> | Promise<Map<string, TokenGrant[]>> {
    if (this.grants) return this.grants;
    if (!this.loading) {
      this.loading = this.read().finally(() => {
        this.loading = undefined;
      });
    }
    return this.loading;
  }

  /** Reads the table; a read started later wins over one started earlier. */
  private async read(): Promise<Map<string, TokenGrant[]>> {
    const round = ++this.rounds;
    const map = new Map<string, TokenGrant[]>();
    const fingerprint = await this.store.fingerprint();
    for (const row of await this.store.all()) {
      const list = map.get(row.hash) ?? [];
      list.push({
        id: row.id,
        role: row.role,
        registryId: row.registryId,
        organisations: organisationsOf(row.organisations),
        expiresAt: row.expiresAt,
      });
      map.set(row.hash, list);
    }
    if (round === this.rounds) {
      this.fingerprint = fingerprint;
      this.grants = map;
    }
    return map;
  }

  /** The access of an `Authorization` header value; a present but unknown token is rejected. */
  accessFor(authorization: string | undefined): RequestAccess | Promise<RequestAccess> {
    if (!authorization) return ANONYMOUS;
    const hash = hashToken(bearerToken(authorization));
    if (this.adminHashes.has(hash)) return adminAccess();
    // The table is in memory but while it is (re)read: then the request waits for it.
    const grants = this.grants ?? this.load();
    const decide = (all: Map<string, TokenGrant[]>): RequestAccess | Promise<RequestAccess> =>
      all.has(hash) ? this.grant(all, hash) : this.recheck().then((fresh) => this.grant(fresh, hash));
    return grants instanceof Promise ? grants.then(decide) : decide(grants);
  }

  /**
   * The access of an `Authorization` header value when `accessFor` would answer it at once and
   * grant it (no token; an admin token; a known, unexpired token while the table is in memory);
   * undefined for anything else (a malformed header, an unknown or expired token, the table being
   * read), which `accessFor` decides. Starts nothing and throws nothing: the listener's fast path
   * (listener.ts) asks it and leaves every other case to the app.
   */
  accessInMemory(authorization: string | undefined): RequestAccess | undefined {
    if (!authorization) return ANONYMOUS;
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return undefined;
    const hash = hashToken(token);
    if (this.adminHashes.has(hash)) return adminAccess();
    if (this.grants === undefined || !this.grants.has(hash)) return undefined;
    try {
      return this.grant(this.grants, hash);
    } catch {
      return undefined;
    }
  }

  /** The fingerprint check in flight for unknown tokens (one at a time; misses meanwhile share it). */
  private checking: Promise<Map<string, TokenGrant[]>> | undefined;

  /**
   * A token created a moment ago (by `dm-registry token create` or another replica) is in the
   * table before the watch's next tick: an unknown token makes the book compare the table's
   * fingerprint — one cheap query, shared by every miss in flight — and read the table again when
   * it changed, so the new token works on the very next request (docs/server.md, "Tokens").
   */
  private recheck(): Promise<Map<string, TokenGrant[]>> {
    if (!this.checking) {
      this.checking = (async () => {
        const now = await this.store.fingerprint();
        if (now !== this.fingerprint) this.grants = undefined;
        return this.grants ?? (await this.load());
      })().finally(() => {
        this.checking = undefined;
      });
    }
    return this.checking;
  }

  private grant(all: Map<string, TokenGrant[]>, hash: string): RequestAccess {
    const now = this.clock();
    const grants = all.get(hash)?.filter((g) => g.expiresAt === null || g.expiresAt > now);
    if (!grants?.length) {
      throw new DmError('UNAUTHORIZED', 'the token is not valid (unknown, revoked or expired)', {
        category: 'unauthorized',
      });
    }
    for (const g of grants) this.used.set(g.id, now);
    if (grants.some((g) => g.role === 'admin')) return adminAccess();
    const reader = readerOf(grants);
    return { admin: false, canRead: (r: RegistryView) => mayRead(reader, r), readable: () => reader };
  }
}

const BEARER = /^(?:Bearer|token)\s+(\S+)$/i;

/** The token of an `Authorization: Bearer <token>` header; another form is rejected. */
export function bearerToken(authorization: string): string {
  const match = BEARER.exec(authorization);
  if (!match) {
    throw new DmError('UNAUTHORIZED', 'the Authorization header must be "Bearer <token>"', {
      category: 'unauthorized',
    });
  }
  return match[1]!;
}

/**
 * What a token's read grants allow together: a grant naming neither a registry nor organisations
 * reads every registry (`--read '*'`); the others add their registry and organisations.
 */
function readerOf(grants: readonly TokenGrant[]): Reader {
  const all = grants.some((g) => g.registryId === null && g.organisations.length === 0);
  const ids = new Set(grants.flatMap((g) => (g.registryId === null ? [] : [g.registryId])));
  const organisations = new Set(grants.flatMap((g) => g.organisations));
  return { all, ids: [...ids], organisations: [...organisations] };
}

/** An admin's access: everything (also what the CLI's own commands read with). */
export const ADMIN_ACCESS: RequestAccess = Object.freeze({
  admin: true,
  canRead: () => true,
  readable: () => EVERY_REGISTRY,
});

function adminAccess(): RequestAccess {
  return ADMIN_ACCESS;
}

/**
 * Writes need an admin token: none sent is 401 UNAUTHORIZED (with WWW-Authenticate), a valid token
 * without the admin role 403 FORBIDDEN (docs/server.md, "Tokens").
 */
export function requireAdmin(access: RequestAccess): void {
  if (access.admin) return;
  if (access === ANONYMOUS) {
    throw new DmError('UNAUTHORIZED', 'this needs an admin token (Authorization: Bearer <token>)', {
      category: 'unauthorized',
    });
  }
  throw new DmError('FORBIDDEN', 'this needs an admin token; the token sent may only read', {
    category: 'forbidden',
  });
}
