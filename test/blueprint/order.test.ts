/**
 * Ordering (docs/blueprints.md "Order"): layers respect every edge of random DAGs; cycles are found.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type DependencyNode, findCycleBfs, findCycleDfs, layers } from '../../client/src/blueprint/index.js';

/** A random DAG: node i may depend only on nodes with a smaller index, shuffled afterwards. */
const dag = fc
  .integer({ min: 1, max: 12 })
  .chain((n) =>
    fc.tuple(
      fc.array(fc.array(fc.boolean(), { minLength: n, maxLength: n }), { minLength: n, maxLength: n }),
      fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: n, maxLength: n },
      ),
    ),
  )
  .map(([matrix, order]) =>
    order.map((i) => ({
      name: `n${i}`,
      dependsOn: matrix[i]!.flatMap((on, j) => (on && j < i ? [`n${j}`] : [])),
    })),
  );

function layerOf(result: string[][]): Map<string, number> {
  const at = new Map<string, number>();
  result.forEach((layer, i) => {
    for (const n of layer) at.set(n, i);
  });
  return at;
}

describe('layers()', () => {
  it('layers() puts every node once and after all its dependencies, for random DAGs', () => {
    fc.assert(
      fc.property(dag, (nodes) => {
        const result = layers(nodes);
        const at = layerOf(result);
        assert.equal(result.flat().length, nodes.length);
        assert.equal(at.size, nodes.length);
        for (const n of nodes) {
          for (const d of n.dependsOn)
            assert.ok((at.get(d) as number) < (at.get(n.name) as number), `${d} before ${n.name}`);
          // as early as possible: a node in layer i > 0 has a dependency in layer i - 1
          const i = at.get(n.name) as number;
          if (i > 0) assert.ok(n.dependsOn.some((d) => at.get(d) === i - 1));
        }
        assert.equal(findCycleDfs(nodes), undefined);
        assert.equal(findCycleBfs(nodes), undefined);
      }),
    );
  });

  it('layers() keeps the input order inside a layer (the diamond of hm01)', () => {
    const nodes: DependencyNode[] = [
      { name: 'd', dependsOn: ['b', 'c'] },
      { name: 'b', dependsOn: ['a'] },
      { name: 'c', dependsOn: ['a'] },
      { name: 'a', dependsOn: [] },
      { name: 'e', dependsOn: [] },
    ];
    assert.deepEqual(layers(nodes), [['a', 'e'], ['b', 'c'], ['d']]);
  });
});

describe('cycle checks', () => {
  it('findCycleDfs() and findCycleBfs() report a real cycle when a back edge is added to a random DAG', () => {
    fc.assert(
      fc.property(
        dag.filter((nodes) => nodes.some((n) => n.dependsOn.length > 0)),
        fc.nat(),
        (nodes, pick) => {
          const withDeps = nodes.filter((n) => n.dependsOn.length > 0);
          const from = withDeps[pick % withDeps.length] as DependencyNode;
          const to = from.dependsOn[0] as string;
          // close the loop: `to` now also depends on `from`
          const cyclic = nodes.map((n) =>
            n.name === to ? { ...n, dependsOn: [...n.dependsOn, from.name] } : n,
          );
          const byName = new Map(cyclic.map((n) => [n.name, n]));
          for (const cycle of [findCycleDfs(cyclic), findCycleBfs(cyclic)]) {
            assert.ok(cycle, 'a cycle is found');
            // the path ends on a node it visited before (BFS paths may start outside the cycle)
            assert.ok(cycle.slice(0, -1).includes(cycle[cycle.length - 1] as string));
            for (let i = 0; i + 1 < cycle.length; i++) {
              assert.ok(
                byName.get(cycle[i] as string)?.dependsOn.includes(cycle[i + 1] as string),
                'each step is an edge',
              );
            }
          }
        },
      ),
    );
  });

  it('findCycleBfs() reports the path as Landscaper does: a -> b -> a', () => {
    const cycle = findCycleBfs([
      { name: 'a', dependsOn: ['b'] },
      { name: 'b', dependsOn: ['a'] },
    ]);
    assert.deepEqual(cycle, ['a', 'b', 'a']);
  });
});
