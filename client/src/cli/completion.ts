/**
 * Shell completion (docs/client.md "Shell completion"): `dm completion bash|zsh|fish` prints a small
 * script that asks `dm __complete <words…>` for the candidates of the last word — subcommands,
 * flags, flag values (`-o json|yaml|text`), the shells, config keys and their allowed values,
 * deployment names, template references from dm.lock and the cache — and completes file names
 * when dm says so (exit 1), i.e. where a file is what the word is.
 */
import type { Command, Option } from 'commander';
import { CONFIG_FILE_KEYS, CONFIG_KEY_CHOICES } from '../config/config.js';
import { commandName } from './context.js';

/** The shells `dm completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** Flags whose value is a deployment name. */
const DEPLOYMENT_FLAGS = new Set(['--deployment', '--name']);
/** Commands whose first argument is a deployment name. */
const DEPLOYMENT_COMMANDS = new Set([
  'manifests',
  'deployments get',
  'deployments delete',
  'history',
  'rollback',
  'drift',
]);
/** Commands whose every argument is a template reference. */
const REFERENCE_COMMANDS = new Set(['pull', 'versions', 'resolve', 'update']);
/** Commands whose argument is a file or a template reference: a reference once the word has a ':'. */
const FILE_OR_REFERENCE_COMMANDS = new Set(['expand', 'deploy', 'diff', 'push', 'template render']);
/** Config keys whose value is a file name. */
const FILE_CONFIG_KEYS = new Set(['kubeconfig']);

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
  /** Template references met before: dm.lock's and the cache's (read lazily). */
  references(): Promise<string[]>;
}

/** The values `dm config set <key>` accepts, when they are a fixed set; undefined: file names. */
function configValues(key: string): readonly string[] | undefined {
  if (FILE_CONFIG_KEYS.has(key)) return undefined;
  return (CONFIG_KEY_CHOICES as Record<string, readonly string[] | undefined>)[key] ?? [];
}

/** Candidates for positional argument `index` of `command` (`given`: the ones before it); undefined: file names. */
async function positionalCandidates(
  command: Command,
  index: number,
  given: readonly string[],
  current: string,
  sources: CompletionSources,
): Promise<readonly string[] | undefined> {
  const name = commandName(command);
  if (name === 'completion') return index === 0 ? SHELLS : [];
  if (name === 'config get' || name === 'config unset') return index === 0 ? CONFIG_FILE_KEYS : [];
  if (name === 'config set') {
    if (index === 0) return CONFIG_FILE_KEYS;
    return index === 1 ? configValues(given[0] ?? '') : [];
  }
  if (DEPLOYMENT_COMMANDS.has(name) && index === 0) return sources.deployments();
  if (REFERENCE_COMMANDS.has(name)) return sources.references();
  if (FILE_OR_REFERENCE_COMMANDS.has(name) && index === 0 && current.includes(':'))
    return sources.references();
  const choices = command.registeredArguments[index]?.argChoices;
  return choices ?? undefined;
}

/**
 * The candidates for the last of `words` (the words after `dm`, the last one being completed, maybe
 * empty); undefined means "complete file names".
 */
export async function completeWords(
  program: Command,
  words: readonly string[],
  sources: CompletionSources,
): Promise<string[] | undefined> {
  let command = program;
  const positionals: string[] = [];
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
    if (sub && positionals.length === 0) command = sub;
    else positionals.push(word);
  }
  const matching = (list: readonly string[]) => list.filter((c) => c.startsWith(current));
  if (expectValue) {
    if (expectValue.argChoices) return matching(expectValue.argChoices);
    if (expectValue.long && DEPLOYMENT_FLAGS.has(expectValue.long))
      return matching(await sources.deployments());
    return undefined;
  }
  if (current.startsWith('-')) return matching(flagsOf(command));
  const subs = command.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  if (subs.length > 0 && positionals.length === 0) {
    return matching(subs.map((c) => c.name()).filter((n) => n !== 'help'));
  }
  const candidates = await positionalCandidates(command, positionals.length, positionals, current, sources);
  return candidates === undefined ? undefined : matching(candidates);
}

export function completionScript(shell: string): string | undefined {
  switch (shell) {
    case 'bash':
      return `# dm completion for bash: source <(dm completion bash)
_dm_completion() {
  # The words up to the cursor as typed: bash splits at ':' (COMP_WORDBREAKS), references do not.
  local line="\${COMP_LINE:0:COMP_POINT}"
  local -a words
  read -ra words <<< "$line"
  if [[ -z "$line" || "$line" == *[[:space:]] ]]; then words+=(""); fi
  local cur="\${words[\${#words[@]}-1]}"
  local IFS=$'\\n'
  local candidates
  if candidates=$(dm __complete "\${words[@]:1}" 2>/dev/null); then
    COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
    # Relative to bash's own current word, which starts after the last ':'.
    if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
      local colon="\${cur%"\${cur##*:}"}"
      local i
      for i in "\${!COMPREPLY[@]}"; do COMPREPLY[i]="\${COMPREPLY[i]#"$colon"}"; done
    fi
  else
    COMPREPLY=($(compgen -f -- "\${COMP_WORDS[COMP_CWORD]}"))
    compopt -o filenames 2>/dev/null
  fi
}
complete -F _dm_completion dm
`;
    case 'zsh':
      return `#compdef dm
# dm completion for zsh: dm completion zsh > "\${fpath[1]}/_dm"
_dm() {
  local out
  if out="$(dm __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)"; then
    (( \${#out} )) && compadd -- "\${(@f)out}"
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
  or __fish_complete_path (commandline -ct)
end
complete -c dm -f -a '(__dm_complete)'
`;
    default:
      return undefined;
  }
}
