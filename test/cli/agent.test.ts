/**
 * The expansion agent (docs/client.md, "The expansion agent"), run as users meet it: the real
 * `dm` (bin/dm.js → the bundle), DM_AGENT=on, the first `dm expand` starting the agent and later
 * ones served by it. What a served run prints and exits with must be what the command's own
 * process does (a differential over varied runs: working directories, environments, config files,
 * errors); the agent must not outlive what ends it (stop, idle, a client leaving mid-run), and must
 * not be used from a directory others may enter, nor where CI is set.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { dmBin, isolatedEnv, runDm, runProcess } from '../support/run-cli.js';

interface Status {
  running?: false;
  pid?: number;
  served?: number;
  busy?: boolean;
}

const started: number[] = [];
const caches: string[] = [];
after(() => {
  // The agents of this file's tests, also those a run started as it exited (after a stuck agent
  // was ended, say): each is named by the pid file beside its socket.
  for (const cache of caches) {
    const dir = join(cache, 'dm', 'agent');
    for (const name of existsSync(dir) ? readdirSync(dir) : []) {
      if (!name.endsWith('.pid')) continue;
      started.push(Number(readFileSync(join(dir, name), 'utf8')));
    }
  }
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
});

/** An isolated environment (run-cli.ts) whose agents are ended when this file's tests are done. */
async function agentEnv(): Promise<Record<string, string>> {
  const env = await isolatedEnv();
  caches.push(env.XDG_CACHE_HOME as string);
  return env;
}

async function status(env: Record<string, string>): Promise<Status> {
  const run = await runDm(['agent', 'status', '-o', 'json'], { env });
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Status;
}

/** Polls `check` (every 100 ms, up to 60 s: a busy machine) until it holds. */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts the agent of `env`'s cache with one run and waits until it answers; returns its pid. */
async function startAgent(env: Record<string, string>, cwd: string, args: string[]): Promise<number> {
  const first = await runDm(args, { cwd, env: { ...env, DM_AGENT: 'on' } });
  assert.equal(first.code, 0, first.stderr);
  // Started, and done with its warm-up (busy until then).
  const pid = await until('the agent to start', async () => {
    const now = await status(env);
    return now.busy === false ? now.pid : undefined;
  });
  started.push(pid);
  return pid;
}

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dm-agent-'));
  writeFileSync(
    join(dir, 'config.yaml'),
    'imports:\n- path: web.jinja\n- path: gen.py\nresources:\n- name: a\n  type: web.jinja\n  properties: {port: 80}\n- name: b\n  type: gen.py\n  properties: {n: 2}\n',
  );
  writeFileSync(
    join(dir, 'web.jinja'),
    'resources:\n- name: {{ env.name }}-svc\n  type: Service\n  properties: {port: {{ properties.port }}, proto: {{ properties.proto }}, deployment: {{ env.deployment }}}\n',
  );
  writeFileSync(
    join(dir, 'web.jinja.schema'),
    'properties:\n  port: {type: integer}\n  proto: {type: string, default: TCP}\nrequired: [port]\n',
  );
  writeFileSync(
    join(dir, 'gen.py'),
    'def GenerateConfig(context):\n  return {"resources": [{"name": "%s-%d" % (context.env["name"], i), "type": "ConfigMap", "properties": {"i": i}} for i in range(context.properties["n"])]}\n',
  );
  mkdirSync(join(dir, 'sub'));
  writeFileSync(
    join(dir, 'sub', 'config.yaml'),
    'resources:\n- name: only\n  type: ConfigMap\n  properties: {x: 1}\n',
  );
  // An output of some MB: many chunks of one frame on the socket.
  writeFileSync(
    join(dir, 'big.yaml'),
    'imports:\n- path: gen.py\nresources:\n- name: big\n  type: gen.py\n  properties: {n: 20000}\n',
  );
  writeFileSync(
    join(dir, 'broken.yaml'),
    'resources:\n- name: a\n  type: web.jinja\n  properties: {port: eighty}\nimports:\n- path: web.jinja\n',
  );
  return dir;
}

describe('the expansion agent', () => {
  it('serves dm expand and dm template render with the same output, errors and exit codes as the command’s own process', async () => {
    const env = await agentEnv();
    const dir = await project();
    const configFile = join(env.HOME as string, 'dm-config.yaml');
    writeFileSync(configFile, 'output: json\n');
    const first = await startAgent(env, dir, ['expand', 'config.yaml']);
    // Varied runs, in an order where each differs from the one before in what the process-wide
    // state would carry over: the working directory, the environment, a config file.
    const runs: { args: string[]; cwd: string; env?: Record<string, string> }[] = [
      { args: ['expand', 'config.yaml'], cwd: dir },
      { args: ['expand', 'config.yaml', '-o', 'json', '--deployment', 'prod'], cwd: dir },
      { args: ['expand', 'config.yaml'], cwd: join(dir, 'sub') },
      { args: ['expand', 'config.yaml'], cwd: dir, env: { DM_CONFIG: configFile } },
      { args: ['expand', 'config.yaml'], cwd: dir },
      { args: ['expand', 'broken.yaml'], cwd: dir },
      { args: ['expand', 'missing.yaml'], cwd: dir },
      { args: ['expand', 'web.jinja', '--properties', 'port=8080'], cwd: dir },
      { args: ['expand', '--output', 'nonsense', 'config.yaml'], cwd: dir },
      { args: ['expand', '--help'], cwd: dir },
      { args: ['expand', 'sub/config.yaml', '-o', 'yaml'], cwd: dir },
      { args: ['expand', 'big.yaml', '-o', 'json'], cwd: dir },
      { args: ['template', 'render', 'web.jinja', '--properties', 'port=81'], cwd: dir },
      { args: ['template', 'render', 'gen.py', '--properties', 'n=3', '-o', 'json'], cwd: dir },
      { args: ['template', 'render', 'web.jinja', '--context', 'missing.yaml'], cwd: dir },
    ];
    const before = (await status(env)).served ?? 0;
    for (const run of runs) {
      const own = await runDm(run.args, { cwd: run.cwd, env: { ...env, ...run.env, DM_AGENT: 'off' } });
      const served = await runDm(run.args, { cwd: run.cwd, env: { ...env, ...run.env, DM_AGENT: 'on' } });
      assert.deepEqual(served, own, `dm ${run.args.join(' ')} in ${run.cwd}`);
    }
    // A reader that stops early: quiet, as the command's own process.
    for (const agent of ['off', 'on']) {
      const head = await runProcess(
        'sh',
        ['-c', `"${process.execPath}" "${dmBin}" expand config.yaml | head -c 10`],
        {
          cwd: dir,
          env: { ...process.env, ...env, DM_AGENT: agent },
        },
      );
      assert.deepEqual(head, { code: 0, stdout: 'config:\n  ', stderr: '' }, `DM_AGENT=${agent}`);
    }
    // Every one of them was the agent's (none fell back to a process of its own).
    assert.equal((await status(env)).served, before + runs.length + 1);
    // A broken request (a client of another version, a stray connection) is declined; the agent
    // goes on.
    const agentDir = join(env.XDG_CACHE_HOME as string, 'dm', 'agent');
    const [socketName] = readdirSync(agentDir).filter((n) => n.endsWith('.sock'));
    for (const line of [
      '{"protocol":1,"run":{"args":"expand","cwd":7}}',
      'not json',
      '{"protocol":99,"status":true}',
    ]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(join(agentDir, socketName as string));
        let text = '';
        socket.on('connect', () => socket.write(`${line}\n`));
        socket.on('data', (d) => {
          text += d;
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
      });
      assert.match(answer, /^\{"decline":"a request this agent does not read"\}\n$/, line);
    }
    assert.equal((await status(env)).pid, first);
    // The errors among them were errors.
    const broken = await runDm(['expand', 'broken.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'on' } });
    assert.equal(broken.code, 4, broken.stderr);
    assert.match(broken.stderr, /^error: .*port/m);
  });

  it('stops when asked, and after its idle time', async () => {
    const env = await agentEnv();
    const dir = await project();
    const pid = await startAgent({ ...env }, dir, ['expand', 'config.yaml']);
    const stop = await runDm(['agent', 'stop'], { env });
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`stopped the agent \\(pid ${pid}\\)`));
    await until('the agent to exit', async () => (alive(pid) ? undefined : true));
    assert.deepEqual(await status(env), { running: false });
    assert.deepEqual(readdirSync(join(env.XDG_CACHE_HOME as string, 'dm', 'agent')), []);
    // Stopped by a signal: the same, socket and pid file gone.
    const signalled = await startAgent(env, dir, ['expand', 'config.yaml']);
    process.kill(signalled, 'SIGTERM');
    await until('the signalled agent to exit', async () => (alive(signalled) ? undefined : true));
    assert.deepEqual(readdirSync(join(env.XDG_CACHE_HOME as string, 'dm', 'agent')), []);
    // The agent takes its idle time from the environment of the run that starts it.
    const idle = await startAgent({ ...env, DM_AGENT_IDLE_SECONDS: '3' }, dir, ['expand', 'config.yaml']);
    await until('the idle agent to exit', async () => (alive(idle) ? undefined : true));
    assert.deepEqual(await status(env), { running: false });
  });

  it('ends the run, its rendering processes and itself when the client leaves mid-run', async () => {
    const env = await agentEnv();
    const dir = await project();
    writeFileSync(
      join(dir, 'spin.jinja'),
      '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}resources: []\n',
    );
    const pid = await startAgent(env, dir, ['expand', 'config.yaml']);
    const client = spawn(process.execPath, [dmBin, 'expand', 'spin.jinja', '--timeout', '600'], {
      cwd: dir,
      env: { ...process.env, ...env, DM_AGENT: 'on' },
      stdio: 'ignore',
    });
    await until('the agent to be busy', async () => ((await status(env)).busy ? true : undefined));
    client.kill('SIGINT');
    await until('the agent to exit', async () => (alive(pid) ? undefined : true));
    // Nothing of its process group is left (its rendering processes).
    await until('its rendering processes to exit', async () => {
      try {
        process.kill(-pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    // The next run is served as before (by a new agent once it has started).
    const again = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'on' } });
    assert.equal(again.code, 0, again.stderr);
    const next = await until('a new agent', async () => (await status(env)).pid);
    started.push(next);
    assert.notEqual(next, pid);
  });

  it('a stuck agent is ended, and the run goes on in its own process', async () => {
    const env = await agentEnv();
    const dir = await project();
    const own = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'off' } });
    const pid = await startAgent(env, dir, ['expand', 'config.yaml']);
    process.kill(pid, 'SIGSTOP');
    // It accepts connections (the system does) but answers nothing: after the client's wait for
    // a first answer, the client ends it and runs the command itself.
    const run = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'on' } });
    assert.deepEqual(run, own);
    await until('the stuck agent to be gone', async () => (alive(pid) ? undefined : true));
  });

  it('dm agent start: an agent ready before the first run, which serves it where CI is set too', async () => {
    const env = await agentEnv();
    const dir = await project();
    const own = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'off' } });
    const ci = { ...env, CI: 'true', DM_AGENT: '' };
    // Turned off: refused as a usage error, nothing started.
    const off = await runDm(['agent', 'start'], { env: { ...env, DM_AGENT: 'off' } });
    assert.equal(off.code, 2, off.stderr);
    assert.match(off.stderr, /DM_AGENT is off here/);
    assert.deepEqual(await status(env), { running: false });
    // Started where CI is set (a `dm expand` there starts none itself), ready when it returns.
    const start = await runDm(['agent', 'start', '-o', 'json'], { env: ci });
    assert.equal(start.code, 0, start.stderr);
    const started = JSON.parse(start.stdout) as Status & { started: boolean };
    assert.equal(started.started, true);
    assert.equal(started.busy, false);
    assert.ok(Number.isInteger(started.pid) && (started.pid as number) > 0, start.stdout);
    const now = await status(env);
    assert.equal(now.pid, started.pid);
    assert.equal(now.served, 0);
    // The first run is served.
    const served = await runDm(['expand', 'config.yaml'], { cwd: dir, env: ci });
    assert.deepEqual(served, own);
    assert.equal((await status(env)).served, 1);
    // Again: the same agent.
    const again = await runDm(['agent', 'start'], { env: ci });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`^already running: pid ${started.pid};`));
    assert.equal((await runDm(['agent', 'stop'], { env })).code, 0);
    await until('the agent to stop', async () => (alive(started.pid as number) ? undefined : true));
    // Its directory open to others: one sentence, exit 1, nothing started.
    const agentDir = join(env.XDG_CACHE_HOME as string, 'dm', 'agent');
    chmodSync(agentDir, 0o755);
    const open = await runDm(['agent', 'start'], { env: { ...env, DM_AGENT: 'on' } });
    assert.equal(open.code, 1, open.stderr);
    assert.match(
      open.stderr,
      /^error: the agent's directory .* is not yours alone .*: dm starts no agent there\n/,
    );
    assert.doesNotMatch(open.stderr, /\n\s+at /);
    assert.deepEqual(readdirSync(agentDir), []);
  });

  it('is neither used nor started from a directory others may enter, nor where CI is set', async () => {
    const env = await agentEnv();
    const dir = await project();
    const own = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'off' } });
    // CI set: the command runs in its own process and starts no agent.
    const ci = await runDm(['expand', 'config.yaml'], {
      cwd: dir,
      env: { ...env, CI: 'true', DM_AGENT: '' },
    });
    assert.deepEqual(ci, own);
    const agentDir = join(env.XDG_CACHE_HOME as string, 'dm', 'agent');
    mkdirSync(agentDir, { recursive: true });
    chmodSync(agentDir, 0o755);
    for (let i = 0; i < 2; i++) {
      const open = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'on' } });
      assert.deepEqual(open, own);
    }
    assert.deepEqual(readdirSync(agentDir), []);
    assert.deepEqual(await status(env), { running: false });
    // An agent started there anyway (as a client starts one: agent-client.ts, startAgent) will
    // not listen in a directory others may enter: it ends, leaving nothing behind.
    const agent = spawn(
      process.execPath,
      [join(dirname(dmBin), '..', 'dist', 'bundle', 'cli', 'agent.js'), join(agentDir, 'x.sock')],
      {
        env,
        stdio: 'ignore',
      },
    );
    started.push(agent.pid as number);
    const code = await until('the agent in an open directory to end', async () =>
      agent.exitCode === null ? undefined : agent.exitCode,
    );
    assert.equal(code, 0);
    assert.deepEqual(readdirSync(agentDir), []);
    // The same runs start one once the directory is the user's alone: the mode was the reason.
    chmodSync(agentDir, 0o700);
    const pid = await startAgent(env, dir, ['expand', 'config.yaml']);
    const served = await runDm(['expand', 'config.yaml'], { cwd: dir, env: { ...env, DM_AGENT: 'on' } });
    assert.deepEqual(served, own);
    assert.equal((await status(env)).served, 1);
    assert.equal((await runDm(['agent', 'stop'], { env })).code, 0);
    await until('the agent to stop', async () => (alive(pid) ? undefined : true));
  });
});
