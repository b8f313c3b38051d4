/**
 * Ordering (docs/blueprints.md "Order"): deploy items by `dependsOn`, subinstallations by the data
 * and targets they import from each other. Both give layers: every node comes after all the
 * nodes it depends on; the order inside a layer is the input order.
 */

/** A node and the names of the nodes it depends on. */
export interface DependencyNode {
  name: string;
  dependsOn: readonly string[];
}

/**
 * Layers of a dependency graph (Kahn): layer 0 holds the nodes without dependencies, layer i
 * those whose dependencies are all in earlier layers. Unknown dependencies are ignored here
 * (validate first); the nodes of a cycle are left out, so check for cycles first.
 */
export function layers(nodes: readonly DependencyNode[]): string[][] {
  const names = new Set(nodes.map((n) => n.name));
  const placed = new Set<string>();
  const result: string[][] = [];
  let remaining = nodes.slice();
  while (remaining.length > 0) {
    const layer = remaining.filter((n) =>
      n.dependsOn.every((d) => !names.has(d) || d === n.name || placed.has(d)),
    );
    if (layer.length === 0) break;
    for (const n of layer) placed.add(n.name);
    result.push(layer.map((n) => n.name));
    remaining = remaining.filter((n) => !placed.has(n.name));
  }
  return result;
}

/** A cycle in dependsOn order found by depth-first search, as a path `a → b → … → a`, or undefined. */
export function findCycleDfs(nodes: readonly DependencyNode[]): string[] | undefined {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const s = state.get(name);
    if (s === 'done') return undefined;
    if (s === 'visiting') return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of byName.get(name)?.dependsOn ?? []) {
      if (!byName.has(dep)) continue;
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const n of nodes) {
    const cycle = visit(n.name);
    if (cycle) return cycle;
  }
  return undefined;
}

/**
 * Landscaper's subinstallation cycle check: a breadth-first search from every node along
 * depends-on edges; the first path that revisits a node is returned (`[a, b, a]`).
 */
export function findCycleBfs(nodes: readonly DependencyNode[]): string[] | undefined {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  for (const start of nodes) {
    const queue: string[][] = [[start.name]];
    const seen = new Set([start.name]);
    while (queue.length > 0) {
      const path = queue.shift() as string[];
      const last = path[path.length - 1] as string;
      for (const dep of byName.get(last)?.dependsOn ?? []) {
        if (!byName.has(dep) || dep === last) continue;
        if (path.includes(dep)) return [...path, dep];
        if (seen.has(dep)) continue;
        seen.add(dep);
        queue.push([...path, dep]);
      }
    }
  }
  return undefined;
}
