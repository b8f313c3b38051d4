/**
 * The pages' frame: lang, viewport, one small inline stylesheet (allowed by its hash in the
 * Content-Security-Policy; no script may run), a header with the search box, and a main landmark.
 */
import { createHash } from 'node:crypto';
import type { Child } from 'hono/jsx';

export const STYLESHEET = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#57606a;--bg:#fff;--line:#d0d7de;--accent:#0a58ca;--soft:#f6f8fa;--warn:#9a6700;--err:#cf222e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#30363d;--accent:#58a6ff;--soft:#161b22;--warn:#d29922;--err:#f85149}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
header.site{border-bottom:1px solid var(--line);background:var(--soft)}
header.site div,main,footer{max-width:72rem;margin:0 auto;padding:.75rem 1rem}
header.site div{display:flex;gap:1rem;align-items:center;flex-wrap:wrap}
header.site a.home{font-weight:700;text-decoration:none;color:var(--fg)}
nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0}
search{display:flex;flex:1;min-width:16rem}
form.search{display:flex;align-items:center;gap:.5rem;flex:1;min-width:16rem}
form.search input{flex:1;padding:.4rem .6rem;font:inherit;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
button{padding:.4rem .9rem;font:inherit;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--fg);cursor:pointer}
h1{font-size:1.6rem;margin:.5rem 0}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
.muted{color:var(--muted)}
.layout{display:grid;grid-template-columns:14rem 1fr;gap:2rem}
@media (max-width:48rem){.layout{grid-template-columns:1fr}}
aside h2{font-size:1rem}
aside ul{list-style:none;padding:0;margin:0}
aside li{margin:.2rem 0}
[aria-current]{font-weight:700}
ol.results{list-style:none;padding:0;margin:0}
ol.results li{padding:.6rem 0;border-bottom:1px solid var(--line)}
ol.results .ref{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:600}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:.75rem;overflow:auto}
.reference{display:block;font-size:1.05rem;padding:.6rem .8rem;background:var(--soft);border:1px solid var(--line);border-radius:6px;user-select:all;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;vertical-align:top;padding:.35rem .6rem;border-bottom:1px solid var(--line)}
th{background:var(--soft)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.error{color:var(--err)}
.warning{color:var(--warn)}
.badge{display:inline-block;font-size:.8rem;padding:0 .4rem;border:1px solid var(--line);border-radius:1rem;color:var(--muted)}
nav.pages{display:flex;gap:1rem;align-items:center;margin:1rem 0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:.85rem}
`;

/** For the Content-Security-Policy: the one inline style allowed. */
export const STYLESHEET_HASH = `sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}`;

export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src '${STYLESHEET_HASH}'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

export function Layout(props: { title: string; query?: string; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · dm registry`}</title>
        <link rel="icon" href="data:," />
        {/* A constant of this module, never data. */}
        <style dangerouslySetInnerHTML={{ __html: STYLESHEET }} />
      </head>
      <body>
        <header class="site">
          <div>
            <a class="home" href="/">
              dm registry
            </a>
            <search>
              <form class="search" action="/search" method="get">
                <label for="q" class="muted">
                  Search templates
                </label>
                <input
                  id="q"
                  name="q"
                  type="search"
                  value={props.query ?? ''}
                  placeholder="redis, ingress, cron…"
                />
                <button type="submit">Search</button>
              </form>
            </search>
            <nav aria-label="Site">
              <ul>
                <li>
                  <a href="/search">Templates</a>
                </li>
                <li>
                  <a href="/registries">Registries</a>
                </li>
              </ul>
            </nav>
          </div>
        </header>
        <main>{props.children}</main>
        <footer>
          JSON API under <a href="/api/v1/openapi.json">/api/v1</a>.
        </footer>
      </body>
    </html>
  );
}
