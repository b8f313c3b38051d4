/**
 * A reader that stops early (`dm … | head`) closes the pipe: dm then stops quietly, as cat and
 * kubectl do, instead of crashing on EPIPE with a stack trace. Used by the command's own process
 * (main.ts) and by the expansion agent's client (agent-client.ts), which prints what the agent
 * sends (docs/client.md, "The expansion agent").
 */
let installed = false;

/** Once per process (the agent's client may hand the run back to main.ts). */
export function stopQuietlyWhenPipeCloses(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
}
