/**
 * A bound on how big parsed YAML becomes once aliases are expanded (the "billion laughs" alias
 * bomb): the YAML parser shares aliased nodes, but printing, copying or walking the result would
 * multiply them. Counting with aliases counted each time they are reached, and stopping at the
 * budget, keeps the check itself cheap.
 */
import { DmError } from '../error.js';

export const DEFAULT_MAX_NODES = 1_000_000;

export function checkNodeBudget(value: unknown, source: string, maxNodes = DEFAULT_MAX_NODES): void {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    count++;
    if (count > maxNodes) {
      throw new DmError(
        'YAML_TOO_BIG',
        `${source}: limit: the document expands to more than ${maxNodes} nodes (aliases expanded); an alias bomb?`,
        { category: 'limit', details: { source, maxNodes } },
      );
    }
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stack.push(x);
  }
}
