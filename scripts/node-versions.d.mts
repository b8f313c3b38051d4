// Types of scripts/node-versions.mjs for the tests that import it.
export const NODE_VERSIONS: Record<'22' | '24' | '26', string>;
export const SMOKE_TESTS: string[];
export function cacheRoot(): string;
export function ensureNode(line: string | number): string;
export function ensureBetterSqlite3(line: string | number): string;
export function seedPrebuild(line: string | number, npmCache: string): string;
export function smoke(
  line: string | number,
  options?: { files?: string[]; stdio?: 'inherit' | 'pipe' },
): { status: number; output: string };
