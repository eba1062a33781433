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
});
