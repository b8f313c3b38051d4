import type { Command } from 'commander';
import { action } from '../context.js';

const AGENT_HELP = `
\`dm expand\` is served by a process of yours that keeps dm loaded (the expansion agent), started by
the first \`dm expand\` and stopped after 15 minutes without one. Each run still gets fresh
rendering processes with their limits. DM_AGENT=off turns it off; it is off where CI is set
(DM_AGENT=on turns it on there). See docs/client.md, "The expansion agent".

Examples:
  dm agent status
  dm agent stop
`;

export function registerAgentCommands(program: Command): void {
  const agent = program
    .command('agent')
    .description('the expansion agent that serves `dm expand` (status, stop)')
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
