#!/usr/bin/env node
// `dm --version` is answered before the CLI is loaded: it is run in scripts and must start fast.
if (process.argv.length === 3 && process.argv[2] === '--version') {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(
    `${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`,
  );
} else {
  // Node >= 22.1 keeps V8's compiled code of the bundle's modules between runs, in dm's own cache
  // directory (the XDG rule of client/src/config/config.ts, dmDirectories; docs/client.md, "The CLI
  // bundle"); Node 20 has no such cache and goes on without it.
  const [{ default: nodeModule }, { homedir }, { join }] = await Promise.all([
    import('node:module'),
    import('node:os'),
    import('node:path'),
  ]);
  const cache = join(process.env.XDG_CACHE_HOME || join(process.env.HOME ?? homedir(), '.cache'), 'dm');
  if (typeof nodeModule.enableCompileCache === 'function') {
    nodeModule.enableCompileCache(join(cache, 'compile-cache'));
  }
  // The CLI runs from its bundle (scripts/bundle.mjs; docs/client.md, "The CLI bundle").
  // `dm expand` starts its rendering processes before the CLI loads (client/src/cli/prestart.ts),
  // the Jinja renderer from its snapshot in the cache directory (docs/expansion.md, "Speed").
  // `dm expand` and `dm template render` are served by the user's expansion agent when one runs
  // (docs/client.md, "The expansion agent"); else they run here, and the agent is started for the
  // next run.
  let served;
  if (process.argv[2] === 'expand' || process.argv[2] === 'template') {
    const { agentWanted, runThroughAgent } = await import('../dist/bundle/cli/agent-client.js');
    if (agentWanted(process.argv.slice(2), process.env)) {
      served = await runThroughAgent(process.argv.slice(2), cache);
    }
    if (served === undefined && process.argv[2] === 'expand') {
      const { prestartForExpand } = await import('../dist/bundle/cli/prestart.js');
      prestartForExpand(process.argv.slice(3), cache);
    }
  }
  if (served === undefined) await import('../dist/bundle/cli/main.js');
  else process.exitCode = served;
}
