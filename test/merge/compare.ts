/**
 * Comparing merge results in tests: mappings (Maps or plain objects) either order-insensitively
 * (shared/conformance/README.md) or with key order, lists in order, scalars by SameValue.
 * Returns the path of the first difference, or undefined when equal.
 */

function entriesOf(value: unknown): [unknown, unknown][] | undefined {
  if (value instanceof Map) return [...value.entries()];
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
    return Object.keys(value).map((k) => [k, (value as Record<string, unknown>)[k]]);
  }
  return undefined;
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v) => (v instanceof Map ? Object.fromEntries(v) : v)) ?? String(value);
  } catch {
    return String(value);
  }
}

export function findDifference(
  actual: unknown,
  expected: unknown,
  ordered = false,
  path = '$',
): string | undefined {
  const a = entriesOf(actual);
  const e = entriesOf(expected);
  if (a !== undefined || e !== undefined) {
    if (a === undefined || e === undefined) return `${path}: ${show(actual)} is not ${show(expected)}`;
    if (a.length !== e.length) {
      return `${path}: keys [${a.map(([k]) => String(k))}] are not [${e.map(([k]) => String(k))}]`;
    }
    if (ordered) {
      for (let i = 0; i < a.length; i++) {
        if (!Object.is(a[i]![0], e[i]![0])) {
          return `${path}: key order [${a.map(([k]) => String(k))}] is not [${e.map(([k]) => String(k))}]`;
        }
      }
    }
    const actualMap = new Map(a);
    for (const [key, value] of e) {
      if (!actualMap.has(key)) return `${path}: key ${String(key)} is missing`;
      const d = findDifference(actualMap.get(key), value, ordered, `${path}.${String(key)}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (Array.isArray(actual) || Array.isArray(expected)) {
    if (!Array.isArray(actual) || !Array.isArray(expected))
      return `${path}: ${show(actual)} is not ${show(expected)}`;
    if (actual.length !== expected.length) return `${path}: ${show(actual)} is not ${show(expected)}`;
    for (let i = 0; i < actual.length; i++) {
      const d = findDifference(actual[i], expected[i], ordered, `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (actual instanceof Date && expected instanceof Date) {
    return actual.getTime() === expected.getTime()
      ? undefined
      : `${path}: ${show(actual)} is not ${show(expected)}`;
  }
  // Numbers as JSON carries them: -0 is 0.
  const same =
    typeof actual === 'number' && typeof expected === 'number'
      ? actual === expected || (Number.isNaN(actual) && Number.isNaN(expected))
      : Object.is(actual, expected);
  return same ? undefined : `${path}: ${show(actual)} is not ${show(expected)}`;
}
