/** The shell commands of a README section, as test/readme.test.ts and test/package/ run them. */

export interface TourCommand {
  /** The command as the README writes it (comment removed). */
  command: string;
  /** Exit status the README promises: `exit N` in the line's comment, else 0. */
  expectedExit: number;
}

/** Splits `text` at `sep` characters outside single or double quotes. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (text.startsWith(sep, i)) {
      parts.push(current);
      current = '';
      i += sep.length - 1;
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts;
}

/**
 * The commands of the README's `sh` blocks in the section headed `## <section>`, in order. A line
 * ending in `\` continues on the next, and a here-document (`<<'TAG'` … `TAG`) belongs to the
 * command that opens it.
 */
export function sectionCommands(readme: string, section: string): TourCommand[] {
  const text = readme.split(new RegExp(`^## ${section}$`, 'm'))[1]?.split(/^## /m)[0] ?? '';
  const commands: TourCommand[] = [];
  for (const block of text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const lines = (block[1] ?? '').split('\n');
    for (let i = 0; i < lines.length; i++) {
      let raw = lines[i] ?? '';
      while (raw.endsWith('\\') && i + 1 < lines.length) raw = `${raw.slice(0, -1)} ${lines[++i]!.trim()}`;
      const [code = '', ...comment] = splitOutsideQuotes(raw, ' #');
      const expectedExit = Number(/\bexit (\d+)/.exec(comment.join(' #'))?.[1] ?? 0);
      const heredoc = /<<-?'?(\w+)'?/.exec(code)?.[1];
      if (heredoc) {
        const body: string[] = [];
        while (i + 1 < lines.length && lines[i + 1] !== heredoc) body.push(lines[++i]!);
        i++; // the terminator
        commands.push({ command: `${code.trim()}\n${body.join('\n')}\n${heredoc}`, expectedExit });
        continue;
      }
      for (const command of splitOutsideQuotes(code, ';')) {
        if (command.trim() !== '') commands.push({ command: command.trim(), expectedExit });
      }
    }
  }
  return commands;
}
