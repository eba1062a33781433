// The tokend command: `node src/cli/main.ts …`, `npm run tokend -- …`, or `tokend …` through bin/tokend.js.
import { commandsFor } from './commands/index.ts';
import { runCli } from './run.ts';

const argv = process.argv.slice(2);
process.exitCode = await runCli(await commandsFor(argv), argv, {
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
