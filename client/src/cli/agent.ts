/**
 * The expansion agent (docs/client.md, "The expansion agent"): a process of the user's that keeps
 * dm's code loaded and warm and serves `dm expand` to `bin/dm.js` over a Unix socket in dm's cache
 * directory (agent-client.ts), one run at a time. Each run gets rendering processes of its own,
 * started fresh after the run before it (render-sandbox.ts, startRenderersEarly), with the same
 * limits and read-list as in a command's own process: no template's state crosses runs. The run
 * sees the client's working directory, environment, umask and terminals; what it prints goes to
 * the client. It stops after a while without runs, when its socket is gone or replaced, when a
 * client leaves during its run, and when it has grown past its memory bound.
 *
 * Run: node <the bundle's agent.js (scripts/bundle.mjs)> <socket>
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { pythonRunnerDir } from '../expand/python/runner-cache.js';
import { startRenderersEarly } from '../expand/sandbox/render-sandbox.js';
import { rendererSnapshotDir } from '../expand/sandbox/renderer-snapshot.js';
import {
  AGENT_PROTOCOL,
  type AgentFrame,
  type AgentRequest,
  type AgentStatus,
  agentEntry,
  agentPidFile,
  privateDirectory,
} from './agent-client.js';
import { warmUp } from './agent-warm-up.js';
import { runCli } from './run.js';

/** Seconds without a run after which the agent stops (DM_AGENT_IDLE_SECONDS overrides). */
const DEFAULT_IDLE_SECONDS = 15 * 60;
/** Largest request line (arguments and environment) the agent reads. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** How long a client has to send its request once connected. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Past this resident size after a run, the agent stops (the next run starts a fresh one). */
const MAX_RSS_BYTES = 1024 * 1024 * 1024;

const socketPath = process.argv[2];
if (!socketPath) process.exit(2);
const cacheDir = dirname(dirname(socketPath));
const idleSeconds =
  Number(process.env.DM_AGENT_IDLE_SECONDS) > 0
    ? Number(process.env.DM_AGENT_IDLE_SECONDS)
    : DEFAULT_IDLE_SECONDS;
const since = Date.now();
let served = 0;
let busy = false;
// The build this agent runs: another build (an upgrade) gets an agent of its own, and this one
// declines and stops (agent-client.ts names the socket after it).
const built = statSync(agentEntry());

function sameBuild(): boolean {
  try {
    const now = statSync(agentEntry());
    return now.ino === built.ino && now.mtimeMs === built.mtimeMs && now.size === built.size;
  } catch {
    return false;
  }
}

/** Listens only in a directory of this user's that no one else may enter. */
function prepareDirectory(): boolean {
  const dir = dirname(socketPath as string);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return false;
  }
  return privateDirectory(dir);
}

/** Whether an agent answers on the socket already. */
function answered(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.on('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.on('error', () => resolve(false));
  });
}

/** Whether the next run's rendering processes are ready (started warm or cold). */
let renderersReady = true;
/** Whether to start them warm: not while runs come back to back (below). */
let startWarm = true;

/**
 * Rendering processes for the next run, as `dm expand` would start them (commands/expand.ts),
 * warm (docs/expansion.md, "Rendering processes started warm"): their warm-up runs while the user
 * is between runs. A run that comes before they are ready would wait for the warm-up, so while
 * runs come back to back (a script's loop) they start cold, which is ready sooner.
 */
let renderersStarted = 0;
function startNextRenderers(): void {
  renderersReady = false;
  const generation = ++renderersStarted;
  void startRenderersEarly(
    { jinja: true, python: true },
    { snapshots: rendererSnapshotDir(cacheDir), pythonRunners: pythonRunnerDir(cacheDir), warm: startWarm },
  ).then(() => {
    if (generation === renderersStarted) renderersReady = true;
  });
}

/** At a run's start: were its rendering processes ready? Decides how the next ones start. */
function noteRenderersAtRun(): void {
  startWarm = renderersReady;
}

let idleTimer: NodeJS.Timeout | undefined;
function idleFromNow(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = setTimeout(stop, idleSeconds * 1000);
}

let socketIno: number | undefined;
/** The warm-up's directory while it runs (agent-warm-up.ts). */
let warmUpDir: string | undefined;
function stop(): never {
  try {
    // Only our own socket: a newer agent may have taken the path.
    if (socketIno !== undefined && statSync(socketPath as string).ino === socketIno)
      unlinkSync(socketPath as string);
  } catch {}
  if (warmUpDir) rmSync(warmUpDir, { recursive: true, force: true });
  try {
    if (
      socketIno !== undefined &&
      readFileSync(agentPidFile(socketPath as string), 'utf8') === String(process.pid)
    )
      unlinkSync(agentPidFile(socketPath as string));
  } catch {}
  // During a run (or the warm-up) its rendering processes go too: the process group.
  if (busy) {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {}
  }
  process.exit(0);
}

function send(connection: Socket, frame: AgentFrame): void {
  if (!connection.destroyed) connection.write(`${JSON.stringify(frame)}\n`);
}

type Write = typeof process.stdout.write;
type RunRequest = Extract<AgentRequest, { run: unknown }>['run'];

/**
 * Runs `dm <args>` as the client's process would: its directory, environment, umask and
 * terminals, what it prints handed to `sink`; process-wide state is put back after. Resolves to
 * the exit code, or undefined when it cannot run there (a directory it cannot enter).
 */
async function runAs(request: RunRequest, sink: (frame: AgentFrame) => void): Promise<number | undefined> {
  const home = process.cwd();
  try {
    process.chdir(request.cwd);
  } catch {
    return undefined;
  }
  const ownEnv = { ...process.env };
  const ownUmask = process.umask(request.umask);
  replaceEnv(request.env);
  const streams = [
    [process.stdout, 'o', request.stdoutTTY],
    [process.stderr, 'e', request.stderrTTY],
  ] as const;
  const saved = streams.map(([stream]) => ({
    write: stream.write,
    isTTY: stream.isTTY,
    columns: stream.columns,
  }));
  for (const [stream, key, tty] of streams) {
    stream.write = ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      sink(key === 'o' ? { o: text } : { e: text });
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as Write;
    stream.isTTY = tty;
    if (request.columns !== undefined) stream.columns = request.columns;
  }
  process.exitCode = undefined;
  try {
    return await runCli(['node', 'dm', ...request.args]);
  } catch {
    return 1;
  } finally {
    streams.forEach(([stream], i) => {
      const was = saved[i] as (typeof saved)[number];
      stream.write = was.write;
      stream.isTTY = was.isTTY as boolean;
      stream.columns = was.columns as number;
    });
    replaceEnv(ownEnv);
    process.umask(ownUmask);
    process.chdir(home);
    process.exitCode = undefined;
  }
}

/** Serves one client's run. */
async function run(connection: Socket, request: RunRequest): Promise<void> {
  // A client that leaves (Ctrl-C) ends the run as the terminal ends a command's own process:
  // the agent's process group (it leads one: agent-client.ts starts it detached), its rendering
  // processes with it, is killed. A new agent serves the next run.
  let finished = false;
  connection.once('close', () => {
    if (finished) return;
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {}
    process.exit(130);
  });
  send(connection, { accepted: true });
  const code = await runAs(request, (frame) => send(connection, frame));
  finished = true;
  send(connection, code === undefined ? { decline: 'cannot enter the working directory' } : { x: code });
  connection.end();
}

/** Whether a run request has the shape runAs reads (a client is this user's, but may be broken). */
function wellFormed(run: unknown): run is RunRequest {
  const r = run as RunRequest | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    Array.isArray(r.args) &&
    r.args.every((a) => typeof a === 'string') &&
    typeof r.cwd === 'string' &&
    typeof r.env === 'object' &&
    r.env !== null &&
    Object.values(r.env).every((v) => typeof v === 'string') &&
    Number.isInteger(r.umask) &&
    r.umask >= 0 &&
    r.umask <= 0o777 &&
    typeof r.stdoutTTY === 'boolean' &&
    typeof r.stderrTTY === 'boolean' &&
    (r.columns === undefined || (Number.isInteger(r.columns) && r.columns > 0))
  );
}

/** Makes the process's environment exactly `env` (in place: Node passes it on to children). */
function replaceEnv(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

async function serve(connection: Socket): Promise<void> {
  connection.setEncoding('utf8');
  const line = await new Promise<string | undefined>((resolve) => {
    const pending: string[] = [];
    let length = 0;
    const timer = setTimeout(() => resolve(undefined), REQUEST_TIMEOUT_MS);
    connection.on('data', function onData(chunk: string) {
      // Only the new chunk is searched for the end of the line.
      const newline = chunk.indexOf('\n');
      pending.push(newline >= 0 ? chunk.slice(0, newline) : chunk);
      length += chunk.length;
      if (newline >= 0 || length > MAX_REQUEST_BYTES) {
        connection.off('data', onData);
        clearTimeout(timer);
        const lineLength = newline >= 0 ? length - chunk.length + newline : length;
        resolve(newline >= 0 && lineLength <= MAX_REQUEST_BYTES ? pending.join('') : undefined);
      }
    });
    connection.on('error', () => resolve(undefined));
    connection.on('close', () => resolve(undefined));
  });
  let request: AgentRequest | undefined;
  try {
    request = line === undefined ? undefined : (JSON.parse(line) as AgentRequest);
  } catch {}
  if (!request || request.protocol !== AGENT_PROTOCOL) {
    send(connection, { decline: 'a request this agent does not read' });
    connection.end();
    return;
  }
  if ('status' in request) {
    const status: AgentStatus = {
      pid: process.pid,
      socket: socketPath as string,
      since,
      served,
      busy,
      idleSeconds,
    };
    send(connection, { status });
    connection.end();
    return;
  }
  if ('stop' in request) {
    send(connection, { stopped: true });
    connection.end(stop);
    return;
  }
  if (!wellFormed(request.run)) {
    send(connection, { decline: 'a request this agent does not read' });
    connection.end();
    return;
  }
  if (busy) {
    send(connection, { busy: true });
    connection.end();
    return;
  }
  if (!sameBuild()) {
    send(connection, { decline: 'dm was upgraded' });
    connection.end(stop);
    return;
  }
  busy = true;
  if (idleTimer) clearTimeout(idleTimer);
  noteRenderersAtRun();
  try {
    await run(connection, request.run);
  } finally {
    served++;
    busy = false;
    idleFromNow();
    if (process.memoryUsage.rss() > MAX_RSS_BYTES) stop();
    // The next run's rendering processes, once this run's answer is on its way.
    setImmediate(startNextRenderers);
  }
}

async function main(): Promise<void> {
  if (!prepareDirectory()) process.exit(0);
  // Stopped by a signal (kill, a session's end): as by `dm agent stop`, socket and pid file removed.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stop());
  const path = socketPath as string;
  if (existsSync(path)) {
    if (await answered(path)) process.exit(0);
    try {
      unlinkSync(path);
    } catch {}
  }
  const server = createServer((connection) => {
    connection.on('error', () => {});
    void serve(connection);
  });
  server.on('error', () => process.exit(0));
  server.listen(path, async () => {
    socketIno = statSync(path).ino;
    // For a client that finds this agent stuck (agent-client.ts).
    writeFileSync(agentPidFile(path), String(process.pid), { mode: 0o600 });
    // Warm before the first run (agent-warm-up.ts); a run asked for meanwhile finds it busy.
    busy = true;
    try {
      warmUpDir = mkdtempSync(join(dirname(path), 'warm-up-'));
      await warmUp(warmUpDir, (args, cwd) =>
        runAs(
          {
            args,
            cwd,
            env: { ...process.env, NO_COLOR: '1' } as Record<string, string>,
            umask: 0o077,
            stdoutTTY: false,
            stderrTTY: false,
          },
          () => {},
        ),
      );
    } catch {}
    if (warmUpDir) rmSync(warmUpDir, { recursive: true, force: true });
    warmUpDir = undefined;
    busy = false;
    idleFromNow();
    startNextRenderers();
    // Gone (its cache directory removed), taken by another agent, or dm upgraded: stop.
    setInterval(() => {
      try {
        if (statSync(path).ino === socketIno && (busy || sameBuild())) return;
      } catch {}
      if (busy) process.exit(0);
      stop();
    }, 5000).unref();
  });
}

await main();
