/**
 * `dm blueprint render` as a library call: one sandbox per run, closed afterwards.
 */
import type { BlueprintInputs, BlueprintSource, Files, RenderResult } from './engine.js';
import { renderBlueprint } from './engine.js';
import { BlueprintSandbox, type BlueprintSandboxOptions } from './sandbox.js';

export interface RunOptions {
  sandbox?: BlueprintSandboxOptions;
  resolveBlueprintRef?: (ref: string) => Promise<BlueprintSource | undefined>;
}

export async function runBlueprintRender(
  files: Files,
  inputs: BlueprintInputs,
  options: RunOptions = {},
): Promise<RenderResult> {
  const renderer = new BlueprintSandbox(options.sandbox ?? {});
  try {
    return await renderBlueprint(files, inputs, {
      renderer,
      ...(options.resolveBlueprintRef ? { resolveBlueprintRef: options.resolveBlueprintRef } : {}),
    });
  } finally {
    renderer.close();
  }
}
