import type { Command } from 'commander';
import { DmError } from '../../error.js';
import type { AgentStatus } from '../agent-client.js';
import { action } from '../context.js';

const AGENT_HELP = `
\`dm expand\` and \`dm template render\` are served by a process of yours that keeps dm loaded (the
expansion agent), started by the first \`dm expand\` (or by \`dm agent start\`) and stopped after 15
minutes without a run. Each run still gets fresh rendering processes with their limits.
DM_AGENT=off turns it off; where CI is set a \`dm expand\` starts none (DM_AGENT=on, or
\`dm agent start\` in an earlier step, gives one there). See docs/client.md, "The expansion agent".

Examples:
  dm agent status
  dm agent start
  dm agent stop
`;

export function registerAgentCommands(program: Command): void {
  const agent = program
    .command('agent')
    .description('the expansion agent that serves `dm expand` (status, start, stop)')
    .addHelpText('after', AGENT_HELP);
  agent
    .command('status', { isDefault: true })
    .description('whether an expansion agent runs for this dm and this Node, and what it did')
    .addHelpText('after', '\nExamples:\n  dm agent status\n  dm agent status -o json\n')
    .action(
      action(async (ctx) => {
        const status = await askAgent(ctx.config.dirs.cache, 'status');
        return {
          data: status ?? { running: false },
          text: () =>
            status
              ? `running: pid ${status.pid}, since ${new Date(status.since).toISOString()}, ${status.served} run${status.served === 1 ? '' : 's'} served; stops after ${status.idleSeconds} s without one\n`
              : 'not running\n',
        };
      }),
    );
  agent
    .command('start')
    .description('start the expansion agent now and wait until it is ready (in CI, or before a first run)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm agent start\n  DM_AGENT_IDLE_SECONDS=3600 dm agent start   # stops after an hour without a run\n',
    )
    .action(
      action(async (ctx) => {
        const { status, started } = await startAndWait(ctx.config.dirs.cache);
        return {
          data: { started, ...status },
          text: () =>
            `${started ? 'started the agent' : 'already running'}: pid ${status.pid}; \`dm expand\` is served by it until ${status.idleSeconds} s pass without a run\n`,
        };
      }),
    );
  agent
    .command('stop')
    .description('stop the expansion agent (the next `dm expand` starts one again)')
    .addHelpText(
      'after',
      '\nExamples:\n  dm agent stop\n  DM_AGENT=off dm expand config.yaml   # one run without it\n',
    )
    .action(
      action(async (ctx) => {
        const status = await askAgent(ctx.config.dirs.cache, 'status');
        if (status) await askAgent(ctx.config.dirs.cache, 'stop');
        return {
          data: { stopped: status !== undefined },
          text: () => (status ? `stopped the agent (pid ${status.pid})\n` : 'not running\n'),
        };
      }),
    );
}

async function askAgent(cacheDir: string, what: 'status' | 'stop') {
  const { AGENT_PROTOCOL, agentSocket, talkToAgent } = await import('../agent-client.js');
  const socket = agentSocket(cacheDir);
  if (!socket) return undefined;
  let status: import('../agent-client.js').AgentStatus | undefined;
  await talkToAgent(
    socket,
    what === 'status' ? { protocol: AGENT_PROTOCOL, status: true } : { protocol: AGENT_PROTOCOL, stop: true },
    (frame) => {
      if ('status' in frame) status = frame.status;
    },
  );
  return status;
}

/** How long `dm agent start` waits for the agent to be ready (its warm-up; a busy machine). */
const START_LIMIT_MS = 120_000;

/**
 * Starts the agent of this dm, Node and environment unless one runs, and waits until it has
 * warmed up (docs/client.md, "The expansion agent"); the agent's own status.
 */
async function startAndWait(cacheDir: string): Promise<{ status: AgentStatus; started: boolean }> {
  const client = await import('../agent-client.js');
  if (client.agentTurnedOff(process.env)) {
    throw new DmError('AGENT_UNAVAILABLE', 'DM_AGENT is off here: `dm expand` would not use an agent', {
      category: 'usage',
      hint: 'unset DM_AGENT, or set DM_AGENT=on',
    });
  }
  const socket = client.agentSocket(cacheDir);
  if (!socket) {
    throw new DmError(
      'AGENT_UNAVAILABLE',
      `no agent can listen in ${cacheDir}: the socket's path would be too long for a Unix socket`,
      { hint: 'set XDG_CACHE_HOME to a shorter directory' },
    );
  }
  const dir = client.socketDir(socket);
  if (!client.mayStartIn(socket)) {
    throw new DmError(
      'AGENT_UNAVAILABLE',
      `the agent's directory ${dir} is not yours alone (a symbolic link, another owner, or open to others): dm starts no agent there`,
      { hint: `chmod 700 ${dir}` },
    );
  }
  const running = await askAgent(cacheDir, 'status');
  if (running) return { status: running, started: false };
  const child = client.startAgent(socket);
  for (let waited = 0; waited < START_LIMIT_MS; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    const status = await askAgent(cacheDir, 'status');
    // Another start may have won the socket: its agent serves as well.
    if (status && !status.busy) return { status, started: true };
    if (!status && child && (child.exitCode !== null || child.signalCode !== null)) break;
  }
  throw new DmError('AGENT_UNAVAILABLE', 'the expansion agent did not start', {
    hint: 'DM_AGENT=off runs `dm expand` in its own process',
  });
}
