/**
 * `dm`'s process: runs the CLI once (run.ts) with the process's arguments (docs/client.md "Commands").
 */
import { stopQuietlyWhenPipeCloses } from './closed-pipe.js';
import { runCli } from './run.js';

stopQuietlyWhenPipeCloses();
process.exitCode = await runCli(process.argv);
