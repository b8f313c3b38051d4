/**
 * The expansion agent's client side (docs/client.md, "The expansion agent"): `bin/dm.js` asks the
 * user's agent to run `dm expand` and prints what it answers; when there is no agent, the command
 * runs in its own process as always and starts one for the next run. Loaded before the CLI, so
 * it imports nothing but Node's own modules.
 *
 * The wire: one line of JSON from the client (AgentRequest), then lines of JSON from the agent
 * (AgentFrame) until it closes the connection.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopQuietlyWhenPipeCloses } from './closed-pipe.js';

export const AGENT_PROTOCOL = 1;

/** What a client asks of the agent. */
export type AgentRequest =
  | {
      protocol: number;
      run: {
        /** The arguments after `dm`. */
        args: string[];
        cwd: string;
        env: Record<string, string>;
        umask: number;
        stdoutTTY: boolean;
        stderrTTY: boolean;
        columns?: number;
      };
    }
  | { protocol: number; status: true }
  | { protocol: number; stop: true };

/**
 * What the agent answers: `accepted` as a run starts, output (`o` text on stdout, `e` on
 * stderr), then `x` the exit code;
 * `busy` (serving another run) or `decline` (it will not run this one: another build, a working
 * directory it cannot enter) before any output, and the client runs the command itself.
 */
export type AgentFrame =
  | { o: string }
  | { e: string }
  | { x: number }
  | { accepted: true }
  | { busy: true }
  | { decline: string }
  | { status: AgentStatus }
  | { stopped: true };

export interface AgentStatus {
  pid: number;
  socket: string;
  /** When it started (ms since the epoch). */
  since: number;
  /** Runs it served. */
  served: number;
  /** Whether it is serving one now. */
  busy: boolean;
  /** Seconds without a run after which it stops. */
  idleSeconds: number;
}

const ON = ['on', '1', 'true', 'yes'];
const OFF = ['off', '0', 'false', 'no'];

function agentSetting(env: NodeJS.ProcessEnv): string {
  return (env.DM_AGENT ?? '').trim().toLowerCase();
}

/** Whether no agent is used at all here: `DM_AGENT=off`, or a system without one (Windows). */
export function agentTurnedOff(env: NodeJS.ProcessEnv): boolean {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return true;
  return OFF.includes(agentSetting(env));
}

/** Whether the agent may serve `dm <args>` in this environment (docs/client.md, "The expansion agent"). */
export function agentWanted(args: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (agentTurnedOff(env)) return false;
  // The commands that render templates (in fresh rendering processes, as their own process would).
  if (args[0] !== 'expand' && !(args[0] === 'template' && args[1] === 'render')) return false;
  // Standard input is read by the process the user started.
  return !args.includes('-');
}

/**
 * Whether a `dm expand` that finds no agent starts one. Not where CI is set, unless DM_AGENT=on
 * (as build tools with a daemon do: a one-off machine gains nothing); an agent started there by
 * `dm agent start` serves the runs after it.
 */
export function agentStartsItself(env: NodeJS.ProcessEnv): boolean {
  return !env.CI || ON.includes(agentSetting(env));
}

/** The agent's entry in dm's bundle (agent.js beside this module; scripts/bundle.mjs). */
export function agentEntry(): string {
  return fileURLToPath(new URL('./agent.js', import.meta.url));
}

/** A short, stable digest of a text (FNV-1a, 64 bits): names the socket without node:crypto. */
function digest(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

/**
 * What of the environment Node and OpenSSL read once, at a process's start (Node's options and CA
 * certificates, proxies, OpenSSL's configuration): an agent started with other values would run
 * differently from the client's own process, so these name an agent of their own.
 */
function startupEnvironment(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((k) => /^(NODE_|UV_|OPENSSL_|SSL_CERT_)/.test(k))
    .sort()
    .map((k) => `${k}=${env[k]}`);
}

/** How long a client waits for the agent's first answer (it accepts or declines at once). */
const FIRST_ANSWER_MS = 10_000;

/** The largest socket path every Unix takes (sun_path is 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 100;

/**
 * The socket of the agent of this dm build, this Node and this user, in dm's cache directory
 * (`<cache>/agent/`, a directory only its owner may enter); undefined where none can be (a path
 * too long for a socket, no bundle).
 */
export function agentSocket(cacheDir: string, entry = agentEntry()): string | undefined {
  let built: ReturnType<typeof statSync>;
  try {
    built = statSync(entry);
  } catch {
    return undefined;
  }
  const key = digest(
    [
      process.execPath,
      process.version,
      process.getuid?.(),
      built.ino,
      built.size,
      built.mtimeMs,
      ...process.execArgv,
      ...startupEnvironment(process.env),
    ].join('\0'),
  );
  const path = join(cacheDir, 'agent', `${key}.sock`);
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : undefined;
}

/**
 * Whether `dir` is a directory of this user's that no one else may enter (not a symbolic link):
 * the only place a socket is trusted, and the only one the agent listens in.
 */
export function privateDirectory(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Whether an agent may be started for `socket`: its directory is the user's alone, or does not
 * exist yet (the agent makes it so: agent.ts). An agent would not listen anywhere else.
 */
export function mayStartIn(socket: string): boolean {
  const dir = socketDir(socket);
  return !existsSync(dir) || privateDirectory(dir);
}

export function socketDir(socket: string): string {
  return socket.slice(0, socket.lastIndexOf('/'));
}

/**
 * Sends `request` to the agent at `socket` and hands every frame to `onFrame` until the agent
 * closes; resolves false when there is no agent to talk to (nothing was received).
 */
export function talkToAgent(
  socket: string,
  request: AgentRequest,
  onFrame: (frame: AgentFrame) => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (!privateDirectory(socketDir(socket))) {
      resolve(false);
      return;
    }
    const connection = connect(socket);
    let received = false;
    let pending: string[] = [];
    let broken = false;
    connection.setEncoding('utf8');
    connection.on('connect', () => connection.write(`${JSON.stringify(request)}\n`));
    // An agent that does not answer at all (stopped, stuck) is ended, and the command runs here.
    const silence = setTimeout(() => {
      connection.destroy();
      endStuckAgent(socket);
    }, FIRST_ANSWER_MS);
    connection.on('data', (chunk: string) => {
      if (broken) return;
      // Only the new chunk is searched for the end of a line: a frame of a large output (MBs,
      // one line) arrives in many chunks.
      let start = 0;
      let newline = chunk.indexOf('\n');
      while (newline >= 0) {
        pending.push(chunk.slice(start, newline));
        const line = pending.join('');
        pending = [];
        try {
          const frame = JSON.parse(line) as AgentFrame;
          clearTimeout(silence);
          received = true;
          onFrame(frame);
        } catch {
          broken = true;
          connection.destroy();
          return;
        }
        start = newline + 1;
        newline = chunk.indexOf('\n', start);
      }
      if (start < chunk.length) pending.push(chunk.slice(start));
    });
    connection.on('error', () => {});
    connection.on('close', () => {
      clearTimeout(silence);
      resolve(received);
    });
  });
}

/**
 * `dm <args>` through the agent: resolves to its exit code once the agent has run it and its
 * output is printed, or undefined when the agent did not run it (none, busy, declined, or gone
 * before it printed anything), and the caller runs it. With no agent to talk to, one is started
 * when this process exits (it loads while nothing else of this run needs the machine).
 */
export async function runThroughAgent(
  args: string[],
  cacheDir: string,
  start = agentStartsItself(process.env),
): Promise<number | undefined> {
  const socket = agentSocket(cacheDir);
  if (socket === undefined) return undefined;
  // The agent ends the run when this process goes (closed-pipe.ts).
  stopQuietlyWhenPipeCloses();
  let code: number | undefined;
  let printed = false;
  let alive = false;
  const answered = await talkToAgent(
    socket,
    {
      protocol: AGENT_PROTOCOL,
      run: {
        args,
        cwd: process.cwd(),
        env: Object.fromEntries(
          Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
        ),
        umask: process.umask(),
        stdoutTTY: Boolean(process.stdout.isTTY),
        stderrTTY: Boolean(process.stderr.isTTY),
        ...(process.stdout.columns ? { columns: process.stdout.columns } : {}),
      },
    },
    (frame) => {
      alive = true;
      if ('o' in frame) {
        printed = true;
        process.stdout.write(frame.o);
      } else if ('e' in frame) {
        printed = true;
        process.stderr.write(frame.e);
      } else if ('x' in frame) code = frame.x;
    },
  );
  if (code !== undefined) return code;
  if (printed) {
    // Part of the output is out: running the command again would print it twice.
    process.stderr.write('dm: the expansion agent stopped during the run; run the command again\n');
    return 1;
  }
  // None to talk to: one is started, unless its directory is open to others (it would not listen
  // there: agent.ts).
  if (start && !answered && !alive && mayStartIn(socket)) {
    process.once('exit', () => startAgent(socket));
  }
  return undefined;
}

/** The file beside an agent's socket that holds its process id. */
export function agentPidFile(socket: string): string {
  return socket.replace(/\.sock$/, '.pid');
}

/** Kills the agent of `socket` (its process group) as its pid file names it. */
function endStuckAgent(socket: string): void {
  try {
    const pid = Number(readFileSync(agentPidFile(socket), 'utf8'));
    if (Number.isInteger(pid) && pid > 1) process.kill(-pid, 'SIGKILL');
  } catch {}
}

/**
 * Starts an agent listening on `socket`, detached: it outlives this process (agent.ts). Returns
 * its process, unreferenced (undefined when it could not be started).
 */
export function startAgent(socket: string, entry = agentEntry()): ChildProcess | undefined {
  try {
    // The client's Node flags and environment (which keyed the socket: agentSocket).
    const child = spawn(process.execPath, [...process.execArgv, entry, socket], {
      detached: true,
      stdio: 'ignore',
      cwd: '/',
    });
    child.on('error', () => {});
    child.unref();
    return child;
  } catch {
    return undefined;
  }
}
