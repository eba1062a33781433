// The registry of tokend commands: the module of each command, by the word that runs it (listed by name in
// --help). A command line that names a command loads that module alone, so `tokend serve` carries no
// other command's code; anything else (help, a mistyped name, an option first) loads them all.
import type { Command } from '../command.ts';

const MODULES: Readonly<Record<string, () => Promise<Command>>> = {
  audit: () => import('./audit.ts').then((m) => m.auditCommand),
  client: () => import('./client.ts').then((m) => m.clientCommand),
  export: () => import('./transfer.ts').then((m) => m.exportCommand),
  import: () => import('./transfer.ts').then((m) => m.importCommand),
  'import-ripple': () => import('./import-ripple.ts').then((m) => m.importRippleCommand),
  keys: () => import('./keys.ts').then((m) => m.keysCommand),
  migrate: () => import('./migrate.ts').then((m) => m.migrateCommand),
  serve: () => import('./serve.ts').then((m) => m.serveCommand),
  token: () => import('./token.ts').then((m) => m.tokenCommand),
  user: () => import('./user.ts').then((m) => m.userCommand),
};

/** The words that run a command. */
export const COMMAND_NAMES: readonly string[] = Object.keys(MODULES);

/**
 * The commands a command line needs: the one its first word names, or every command. In name order
 * (plain code-unit order: the names are lowercase ASCII, and localeCompare would load ICU's collation
 * data into memory).
 */
export async function commandsFor(argv: readonly string[]): Promise<Command[]> {
  const first = argv[0];
  const names = first !== undefined && Object.hasOwn(MODULES, first) ? [first] : COMMAND_NAMES;
  const commands = await Promise.all(names.map((name) => MODULES[name]!()));
  return commands.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Every command. */
export const allCommands = (): Promise<Command[]> => commandsFor([]);
