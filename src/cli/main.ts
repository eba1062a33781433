// The tokend command: `node src/cli/main.ts …`, `npm run tokend -- …`, or `tokend …` through bin/tokend.js.
import * as registry from './commands/index.ts';
import type { Command } from './command.ts';
import { runCli } from './run.ts';

// Plain code-unit order (the names are lowercase ASCII): localeCompare would load ICU's collation data (~2 MB).
const commands: Command[] = Object.values(registry).sort((a, b) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
);

process.exitCode = await runCli(commands, process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  ...(process.stdin.isTTY ? { askHidden } : {}),
});

/** Reads one line from the terminal, echoing nothing of it (for passwords). */
async function askHidden(question: string): Promise<string> {
  const { createInterface } = await import('node:readline');
  const { Writable } = await import('node:stream');
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const terminal = createInterface({ input: process.stdin, output, terminal: true });
  const answer = new Promise<string>((resolve) => terminal.question(question, resolve));
  muted = true;
  try {
    return await answer;
  } finally {
    terminal.close();
    process.stderr.write('\n');
  }
}
