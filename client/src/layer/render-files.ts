/**
 * The `dm render` input path (docs/layering.md "Command line"): files and directories of
 * multi-document YAML (a directory contributes its `*.yaml`/`*.yml` files, recursively, in sorted
 * path order), parsed with the shared YAML module, then rendered. The conformance runner goes
 * through `renderTexts`, the same function the CLI ends in.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseYamlDocuments } from '../document/yaml.js';
import { DmError } from '../error.js';
import { readStandardInput, readTextFile, STDIN } from '../input.js';
import { type RenderedDocument, type RenderOptions, renderDocuments } from './render-documents.js';

export type RenderFilesOptions = Omit<RenderOptions, 'sources'>;

export interface YamlInput {
  /** Where the text came from (a file path), for messages. */
  source: string;
  text: string;
}

async function collectYamlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const path = join(dir, entry.name);
    // Symbolic links to directories are not followed (no loops); links to files are read.
    if (entry.isDirectory()) out.push(...(await collectYamlFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Reads the files and directories given on the command line, in order. */
export async function readDocumentFiles(paths: readonly string[], cwd = process.cwd()): Promise<YamlInput[]> {
  const inputs: YamlInput[] = [];
  for (const path of paths) {
    if (path === STDIN) {
      inputs.push({ source: '<stdin>', text: readStandardInput() });
      continue;
    }
    const full = resolve(cwd, path);
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(full);
    } catch {
      throw new DmError('FILE_NOT_FOUND', `${path}: no such file or directory`, {
        category: 'not-found',
        details: { path },
      });
    }
    const files = info.isDirectory()
      ? (await collectYamlFiles(full))
          .sort()
          .map((f) => (path === full ? f : join(path, f.slice(full.length))))
      : [path];
    for (const file of files) inputs.push({ source: file, text: readTextFile(resolve(cwd, file), file) });
  }
  return inputs;
}

/** Parses the texts (errors name file:line) and renders their documents; empty documents are skipped. */
export function renderTexts(
  inputs: readonly YamlInput[],
  options: RenderFilesOptions = {},
): RenderedDocument[] {
  const documents: unknown[] = [];
  const sources: string[] = [];
  for (const input of inputs) {
    const parsed = parseYamlDocuments(input.text, { source: input.source });
    parsed.forEach((doc, i) => {
      if (doc === null || doc === undefined) return;
      documents.push(doc);
      sources.push(`${input.source}, document ${i + 1}`);
    });
  }
  return renderDocuments(documents, { ...options, sources });
}

/** `dm render <file|dir>…` without the printing. */
export async function renderFiles(
  paths: readonly string[],
  options: RenderFilesOptions & { cwd?: string } = {},
): Promise<RenderedDocument[]> {
  const { cwd, ...rest } = options;
  return renderTexts(await readDocumentFiles(paths, cwd), rest);
}
