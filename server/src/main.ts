/**
 * `dm-registry`: the registry server (spec/server.md, spec/cli.md). Placeholder until the server issue lands.
 */
process.stderr.write('dm-registry: not implemented yet\n');
process.exitCode = 1;
