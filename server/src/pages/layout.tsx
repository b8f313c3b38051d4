/**
 * The pages' frame: lang, viewport, one small inline stylesheet and one small inline script (each
 * allowed by its hash in the Content-Security-Policy; no other script may run), a header with the
 * search box, and a main landmark. The script only adds Copy buttons (docs/pages.md, "Use it"):
 * the pages work without it.
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
search{display:flex;flex:1 1 18rem;min-width:0}
form.search{display:flex;align-items:center;gap:.5rem;flex:1;min-width:0}
form.search input{flex:1;min-width:0;width:100%;padding:.4rem .6rem;font:inherit;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
button{padding:.4rem .9rem;font:inherit;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--fg);cursor:pointer}
h1{font-size:1.6rem;margin:.5rem 0;overflow-wrap:anywhere}
a,code,.badge{overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
.muted{color:var(--muted)}
.layout{display:grid;grid-template-columns:14rem 1fr;gap:2rem}
@media (max-width:48rem){.layout{grid-template-columns:minmax(0,1fr)}}
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
div.table{overflow-x:auto;margin:.5rem 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.35rem .6rem;border-bottom:1px solid var(--line)}
th{background:var(--soft)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.error{color:var(--err)}
.warning{color:var(--warn)}
.badge{display:inline-block;font-size:.8rem;padding:0 .4rem;border:1px solid var(--line);border-radius:1rem;color:var(--muted)}
nav.pages{display:flex;gap:1rem;align-items:center;margin:1rem 0}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:.85rem}
.copyable{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:.5rem;align-items:start;margin:1rem 0}
.copyable pre{margin:0;white-space:pre-wrap}
.copyable button{font-size:.8rem;padding:.1rem .5rem;margin-top:.4rem}
.markdown{overflow-wrap:anywhere}
.markdown blockquote{margin:.5rem 0;padding-left:.8rem;border-left:3px solid var(--line);color:var(--muted)}
.diff{line-height:1.35}
.diff .add{background:color-mix(in srgb,#2da44e 18%,transparent)}
.diff .del{background:color-mix(in srgb,#cf222e 18%,transparent)}
.diff .hunk{color:var(--muted)}
form.pick{display:flex;gap:.75rem;align-items:end;flex-wrap:wrap}
form.pick label{display:flex;flex-direction:column;font-size:.9rem}
select{padding:.3rem;font:inherit;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);max-width:100%}
td .markdown>:first-child{margin-top:0}
td .markdown>:last-child{margin-bottom:0}
@media (max-width:40rem){header.site div,main,footer{padding:.6rem .75rem}form.search label{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}h1{font-size:1.35rem}div.table thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}div.table table,div.table caption,div.table tbody,div.table tr{display:block}div.table caption{text-align:left}div.table tr{padding:.4rem 0;border-bottom:1px solid var(--line)}div.table td,div.table th{display:block;border:0;padding:.05rem 0;background:none;text-align:left}div.table td:empty{display:none}div.table td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
`;

/**
 * Shows every button[data-copy] (hidden without JavaScript) and copies the text of the element
 * its value names; where the clipboard API is missing (plain http), selects the text instead.
 */
export const COPY_SCRIPT = `for(const b of document.querySelectorAll('button[data-copy]')){b.hidden=false;b.addEventListener('click',()=>{const t=document.getElementById(b.dataset.copy);if(!t)return;const done=(m)=>{b.textContent=m;setTimeout(()=>{b.textContent='Copy'},1500)};const select=()=>{const r=document.createRange();r.selectNodeContents(t);const s=getSelection();s.removeAllRanges();s.addRange(r);done('Selected: press Ctrl+C')};if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(t.textContent).then(()=>done('Copied'),select)}else select()})}`;

/** For the Content-Security-Policy: the one inline style allowed. */
export const STYLESHEET_HASH = `sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}`;

/** For the Content-Security-Policy: the one inline script allowed. */
export const COPY_SCRIPT_HASH = `sha256-${createHash('sha256').update(COPY_SCRIPT).digest('base64')}`;

export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src '${STYLESHEET_HASH}'; script-src '${COPY_SCRIPT_HASH}'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/** A Copy button for the element `target` (an id); hidden until the script shows it. */
export function CopyButton(props: { target: string; label: string }) {
  return (
    <button type="button" data-copy={props.target} aria-label={props.label} hidden>
      Copy
    </button>
  );
}

export function Layout(props: { title: string; query?: string; copy?: boolean; children?: Child }) {
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
        {/* A constant of this module, never data. */}
        {props.copy && <script dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />}
      </body>
    </html>
  );
}
