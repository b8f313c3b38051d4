/**
 * `dm`'s process: runs the CLI once (run.ts) with the process's arguments (docs/client.md "Commands").
 */
import { runCli } from './run.js';

// A reader that stops early (`dm … | head`) closes the pipe: stop quietly, as cat and kubectl do,
// instead of crashing on EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}
process.exitCode = await runCli(process.argv);
