/** API tokens (docs/server.md "HTTP API"): created (printed once, stored hashed), listed, revoked. */
import { DmError } from '../../../client/src/error.js';
import type { TokenBook } from '../api/access.js';
import type { ServiceStore } from '../store/contract.js';
import { hashToken, newToken } from '../store/secrets.js';
import { organisationList, organisationsOf, storedOrganisations } from '../store/visibility.js';
import type { ServiceContext } from './context.js';

export class TokenAdmin {
  private readonly data: ServiceStore;
  private readonly clock: () => number;

  constructor(
    ctx: ServiceContext,
    private readonly tokens: TokenBook,
  ) {
    this.data = ctx.data;
    this.clock = ctx.clock;
  }

  /**
   * Creates a token (printed once, stored hashed); `expiresAt` epoch ms or null for never. A read
   * token reads one registry, the registries of `organisations`, or (neither) every registry.
   */
  async createToken(
    options: (
      | { admin: true }
      | { admin: false; registry: string | null; organisations?: readonly string[] | undefined }
    ) & {
      expiresAt?: number | null;
    },
  ): Promise<string> {
    const token = newToken();
    let registryId: number | null = null;
    if (!options.admin && options.registry !== null) {
      const row = await this.data.registries.byName(options.registry);
      if (!row)
        throw new DmError('REGISTRY_NOT_FOUND', `no registry ${options.registry}`, { category: 'not-found' });
      registryId = row.id;
    }
    await this.data.tokens.insert({
      hash: hashToken(token),
      role: options.admin ? 'admin' : 'read',
      registryId,
      organisations: options.admin
        ? null
        : storedOrganisations(organisationList(options.organisations ?? [], 'organisations')),
      createdAt: this.clock(),
      expiresAt: options.expiresAt ?? null,
    });
    await this.tokens.reload();
    return token;
  }

  /** The tokens (never their values): id, role, registry, organisations, created, expires, last used. */
  async listTokens(): Promise<
    {
      id: number;
      role: string;
      registry: string | null;
      organisations: string[];
      createdAt: number;
      expiresAt: number | null;
      lastUsedAt: number | null;
    }[]
  > {
    const names = new Map((await this.data.registries.list()).map((r) => [r.id, r.name]));
    return (await this.data.tokens.all()).map((t) => ({
      id: t.id,
      role: t.role,
      registry:
        t.registryId !== null
          ? (names.get(t.registryId) ?? null)
          : t.role === 'read' && !t.organisations
            ? '*'
            : null,
      organisations: organisationsOf(t.organisations),
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
      lastUsedAt: t.lastUsedAt,
    }));
  }

  /** Revokes a token given by its id or by the token itself; throws not found. */
  async revokeToken(idOrToken: string): Promise<void> {
    const done = /^\d+$/.test(idOrToken)
      ? await this.data.tokens.delete({ id: Number(idOrToken) })
      : await this.data.tokens.delete({ hash: hashToken(idOrToken) });
    if (!done) {
      throw new DmError('TOKEN_NOT_FOUND', 'no such token (give its id from `token list`, or the token)', {
        category: 'not-found',
      });
    }
    await this.tokens.reload();
  }
}
