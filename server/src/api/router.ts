/**
 * The app's router (docs/server.md "Read path"): Hono's own (SmartRouter over RegExpRouter and
 * TrieRouter), with the match of a path that is exactly a registered path without parameters kept
 * after its first match. Some of the app's routes have patterns RegExpRouter cannot compile
 * (`:id{.+}`), so Hono falls back to the TrieRouter, which walks the path's segments on every
 * request — a sixth of an in-memory resolve. A parameterless path's match depends on the method
 * and the path only, and the routes are fixed once the first request is matched, so the kept
 * result is the router's own answer; the memo holds at most one entry per registered path and
 * method.
 */
import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/** A registered path that matches itself only: no parameter, wildcard or pattern. */
const PLAIN_PATH = /^[^:*{}?]*$/;

export class MemoRouter<T> implements Router<T> {
  name = 'MemoRouter';
  private readonly inner: Router<T> = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  /** Per plain path, per method: the inner router's result. */
  private readonly plain = new Map<string, Map<string, Result<T>>>();

  add(method: string, path: string, handler: T): void {
    this.inner.add(method, path, handler);
    if (PLAIN_PATH.test(path) && !this.plain.has(path)) this.plain.set(path, new Map());
  }

  match(method: string, path: string): Result<T> {
    const byMethod = this.plain.get(path);
    if (byMethod === undefined) return this.inner.match(method, path);
    let result = byMethod.get(method);
    if (result === undefined) {
      result = this.inner.match(method, path);
      byMethod.set(method, result);
    }
    return result;
  }
}
