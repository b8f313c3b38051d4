/**
 * Shell completion (docs/client.md): `dm completion bash|zsh|fish` prints a small script that asks
 * `dm __complete <words…>` for the candidates of the last word — subcommands, flags, flag values
 * (`-o json|yaml|text`), deployment names — and falls back to file names when there are none.
 */
import type { Command, Option } from 'commander';
import { commandName } from './context.js';

/** Flags whose value is a deployment name. */
const DEPLOYMENT_FLAGS = new Set(['--deployment', '--name']);
/** Commands whose first argument is a deployment name. */
const DEPLOYMENT_COMMANDS = new Set(['manifests', 'deployments get', 'deployments delete']);

function findOption(command: Command, word: string): Option | undefined {
  for (let c: Command | null = command; c; c = c.parent) {
    const o = c.options.find((x) => x.long === word || x.short === word);
    if (o) return o;
  }
  return undefined;
}

function flagsOf(command: Command): string[] {
  const out: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) {
    for (const o of c.options) if (o.long && !o.hidden) out.push(o.long);
  }
  return [...out, '--help'];
}

export interface CompletionSources {
  /** Names of existing deployments (read lazily, only when a deployment name is wanted). */
  deployments(): Promise<string[]>;
}

/**
 * The candidates for the last of `words` (the words after `dm`, the last one being completed, maybe
 * empty). An empty list means "complete file names".
 */
export async function completeWords(
  program: Command,
  words: readonly string[],
  sources: CompletionSources,
): Promise<string[]> {
  let command = program;
  let positional = 0;
  const done = words.slice(0, -1);
  const current = words[words.length - 1] ?? '';
  let expectValue: Option | undefined;
  for (const word of done) {
    if (expectValue) {
      expectValue = undefined;
      continue;
    }
    if (word.startsWith('-')) {
      const o = findOption(command, word.split('=')[0] ?? word);
      if (o && (o.required || o.optional) && !word.includes('=')) expectValue = o;
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub && positional === 0) command = sub;
    else positional++;
  }
  const matching = (list: readonly string[]) => list.filter((c) => c.startsWith(current));
  if (expectValue) {
    if (expectValue.argChoices) return matching(expectValue.argChoices);
    if (expectValue.long && DEPLOYMENT_FLAGS.has(expectValue.long))
      return matching(await sources.deployments());
    return [];
  }
  if (current.startsWith('-')) return matching(flagsOf(command));
  const subs = command.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  if (subs.length > 0 && positional === 0) {
    return matching(subs.map((c) => c.name()).filter((n) => n !== 'help'));
  }
  if (positional === 0 && DEPLOYMENT_COMMANDS.has(commandName(command)))
    return matching(await sources.deployments());
  return [];
}

export function completionScript(shell: string): string | undefined {
  switch (shell) {
    case 'bash':
      return `# dm completion for bash: source <(dm completion bash)
_dm_completion() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  local candidates
  candidates=$(dm __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  if [ -n "$candidates" ]; then
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
  fi
}
complete -F _dm_completion dm
`;
    case 'zsh':
      return `#compdef dm
# dm completion for zsh: dm completion zsh > "\${fpath[1]}/_dm"
_dm() {
  local -a candidates
  candidates=("\${(@f)$(dm __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if (( \${#candidates} )) && [[ -n "\${candidates[1]}" ]]; then
    compadd -- "\${candidates[@]}"
  else
    _files
  fi
}
compdef _dm dm
`;
    case 'fish':
      return `# dm completion for fish: dm completion fish > ~/.config/fish/completions/dm.fish
function __dm_complete
  set -l words (commandline -opc) (commandline -ct)
  dm __complete $words[2..-1] 2>/dev/null
end
complete -c dm -a '(__dm_complete)'
`;
    default:
      return undefined;
  }
}
