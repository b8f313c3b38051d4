/**
 * A module a rendering process loads right after it said it is ready (jinja-child.ts and
 * blueprint/sandbox-child.ts load schema validation, Ajv, so): while dm's own process goes on,
 * and without delaying requests that do not need it. A request that needs it waits for it, and
 * the requests after that one wait too, so that answers keep the order of requests (the
 * sandboxes time the request at the head).
 */
export class LoadAfterReady<T, R> {
  private loaded: T | undefined;
  private failed: string | undefined;
  /** Requests that arrived while one that needs the module waited for it, in order. */
  private backlog: R[] | undefined;

  constructor(
    load: () => Promise<T>,
    private readonly needs: (request: R) => boolean,
    private readonly handle: (request: R) => void,
  ) {
    load().then(
      (module) => {
        this.loaded = module;
        this.drain();
      },
      (error: unknown) => {
        this.failed = error instanceof Error ? error.message : String(error);
        this.drain();
      },
    );
  }

  /** Handles the request now, or once the module is loaded (or could not be). */
  take(request: R): void {
    if (this.backlog) this.backlog.push(request);
    else if (this.needs(request) && this.loaded === undefined && this.failed === undefined)
      this.backlog = [request];
    else this.handle(request);
  }

  /** The module; undefined when it could not be loaded (`failure` says why). */
  get module(): T | undefined {
    return this.loaded;
  }

  get failure(): string {
    return this.failed ?? 'not loaded';
  }

  private drain(): void {
    const waiting = this.backlog ?? [];
    this.backlog = undefined;
    for (const request of waiting) this.handle(request);
  }
}
