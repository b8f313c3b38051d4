/**
 * The import graph of the project's TypeScript sources, read as text (docs/server.md "Where things
 * are"): every `import … from`, `export … from`, side-effect `import '…'` and `import('…')` with a
 * relative specifier, type-only imports included (they tie modules together as much as any other),
 * resolved the way the compiler does for this project (`./x.js` is `x.ts` or `x.tsx`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every .ts/.tsx file under `dir` (declaration files left out). */
export function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const STATIC = /^\s*(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]/gm;
const BARE = /^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The relative specifiers a file imports (comment lines skipped). */
export function specifiers(text: string): string[] {
  const code = text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .join('\n');
  const out: string[] = [];
  for (const re of [STATIC, BARE, DYNAMIC]) {
    for (const m of code.matchAll(re)) if (m[1]!.startsWith('.')) out.push(m[1]!);
  }
  return out;
}

/** `./x.js` from `from` → the source file it names, or undefined when there is none. */
export function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|jsx|mjs|ts|tsx)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** file → the files it imports, every path relative to `root`. */
export function importGraph(root: string, dirs: readonly string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const dir of dirs) {
    for (const file of sourceFiles(join(root, dir))) {
      const edges = new Set<string>();
      for (const s of specifiers(readFileSync(file, 'utf8'))) {
        const target = resolveSpecifier(file, s);
        if (target) edges.add(relative(root, target));
      }
      graph.set(relative(root, file), edges);
    }
  }
  return graph;
}

/**
 * The import circles: each strongly connected set of files (Tarjan), sorted; a file importing
 * itself is a circle of one. Only files in the graph's own keys count.
 */
export function circles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        set.push(w);
      } while (w !== v);
      if (set.length > 1 || graph.get(v)?.has(v)) out.push(set.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
