// The dispatcher: finds the command in argv, parses its options (node:util parseArgs, strict, older
// option names included), prints help or the version, runs the command, prints its output (one JSON
// object with --json) and turns an error into one line on stderr (with --json, one JSON object): exit
// code 2 for a usage mistake, 1 for a failure.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { nearestName } from '../nearest-name.ts';
import type { Store } from '../store/database.ts';
import type { PasswordHasher } from '../users/passwords.ts';
import type { RedisLink } from '../redis.ts';
import { nowSeconds } from '../auth/clock.ts';
import {
  Args,
  CliError,
  isGroup,
  type Command,
  type Context,
  type GroupCommand,
  type LeafCommand,
  type OptionSpec,
} from './command.ts';
import { makeStyle, wantsColour } from './format.ts';
import { terminalJson, terminalOutput, terminalText } from '../shown-text.ts';

export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown };
  stdin: AsyncIterable<string | Buffer>;
  env: Record<string, string | undefined>;
  /** Asks on the terminal without echo; only when standard input is a terminal. */
  askHidden?: (question: string) => Promise<string>;
}

const PROGRAM = 'tokend';

/** Exit codes: a command line tokend cannot run as written, and a command that failed. */
export const EXIT_USAGE = 2;
export const EXIT_FAILURE = 1;

/** The kinds of error `--json` reports in `code`. */
export type ErrorCode = 'usage' | 'config' | 'database' | 'failed';

/** --json, which every leaf command takes. */
const JSON_OPTION: OptionSpec = {
  type: 'boolean',
  description: 'print exactly one JSON object on stdout (an error: one on stderr)',
};

/** The options every leaf command takes besides its own. */
const COMMON_OPTIONS: Record<string, OptionSpec> = {
  json: JSON_OPTION,
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

export async function runCli(commands: Command[], argv: string[], io: Io): Promise<number> {
  const root: GroupCommand = {
    name: PROGRAM,
    summary: 'tokend: the token service of the v1 user-account API, and its administration commands',
    description:
      'Configuration comes from the environment (DATABASE_URL, PORT, BCRYPT_COST, …; see docs/configuration.md).',
    subcommands: commands,
  };
  const resources: Resources = { store: undefined };
  try {
    return await dispatch(root, argv, io, resources);
  } catch (err) {
    return reportError(err, argv.includes('--json'), io);
  } finally {
    // The command's events are published before the store and Redis close (or said to wait).
    await resources.publish?.().catch(() => {});
    await resources.redis?.close().catch(() => {});
    await resources.store?.close().catch(() => {});
  }
}

/**
 * The command as the user can run it again: through npm in a checkout (`npm run tokend -- …`, which sets
 * npm_lifecycle_event to the script's name), else `tokend`.
 */
export const invokedAs = (env: Readonly<Record<string, string | undefined>>): string =>
  env.npm_lifecycle_event === 'tokend' ? 'npm run tokend --' : PROGRAM;

/** Writes the error on stderr, as text or as one JSON object, and returns the exit code. */
function reportError(err: unknown, json: boolean, io: Io): number {
  const usage = err instanceof CliError && err.helpFor !== undefined;
  const help = usage ? `${[invokedAs(io.env), err.helpFor].join(' ').trim()} --help` : undefined;
  const code: ErrorCode = usage ? 'usage' : failureCode(err);
  const message = describeError(err);
  if (json)
    io.stderr.write(
      `${terminalJson({
        error: message,
        code,
        ...(err instanceof ConfigError ? { variable: err.variable } : {}),
        ...(help === undefined ? {} : { help }),
      })}\n`,
    );
  else {
    io.stderr.write(`${PROGRAM}: ${terminalText(message)}\n`);
    if (help !== undefined) io.stderr.write(`Run "${help}" for usage.\n`);
  }
  return usage ? EXIT_USAGE : EXIT_FAILURE;
}

/**
 * What kind of failure `err` is. A DatabaseOpenError is known by its name: the store's modules load
 * only in the commands that open it.
 */
function failureCode(err: unknown): ErrorCode {
  if (err instanceof ConfigError) return 'config';
  if (err instanceof Error && err.name === 'DatabaseOpenError') return 'database';
  return 'failed';
}

/** How many edits away a mistyped command or option may be for "did you mean" to name the nearest. */
const typoDistance = (word: string): number => Math.max(2, Math.floor(word.length / 3));

/** " (did you mean X?)" when one of `names` is near `word`, else nothing. */
function didYouMean(word: string, names: Iterable<string>, show = (name: string) => name): string {
  const near = nearestName(word, names, typoDistance(word));
  return near === undefined ? '' : ` (did you mean ${show(near)}?)`;
}

/** The option a mistyped `--name` or `--name=value` most likely meant, among `options`. */
function optionHint(arg: string, options: Iterable<string>): string {
  const name = /^--([^=]+)/.exec(arg)?.[1];
  return name === undefined ? '' : didYouMean(name, options, (o) => `--${o}`);
}

interface Resources {
  store: Store | undefined;
  /** the Redis link of published events (REDIS_URL), made by the first command that acts */
  redis?: RedisLink;
  /** publishes the events the command wrote to the outbox, when it wrote any */
  publish?: () => Promise<void>;
}

/** How long a command waits for Redis before its events are dropped (said on stderr). */
const CLI_REDIS_WAIT_MS = 1000;

async function dispatch(root: GroupCommand, argv: string[], io: Io, resources: Resources): Promise<number> {
  const path: string[] = [];
  const carried: string[] = [];
  let node: Command = root;
  let i = 0;
  while (isGroup(node)) {
    const arg = argv[i];
    const here = path.join(' ');
    if (arg === undefined) {
      if (path.length === 0 && carried.length === 0) {
        io.stderr.write(groupHelp(root, path));
        return EXIT_USAGE;
      }
      if (path.length === 0) throw new CliError('no command given', here);
      throw new CliError(`"${PROGRAM} ${here}" needs a subcommand`, here);
    }
    if (arg === '--help' || arg === '-h') {
      io.stdout.write(groupHelp(node, path));
      return 0;
    }
    if ((arg === '--version' || arg === '-V') && path.length === 0) {
      const version = readVersion();
      io.stdout.write(carried.length > 0 ? `${JSON.stringify({ version })}\n` : `${PROGRAM} ${version}\n`);
      return 0;
    }
    if (arg === 'help' && path.length === 0) return printHelpFor(root, argv.slice(i + 1), io);
    if (arg === '--json') {
      carried.push(arg);
      i++;
      continue;
    }
    if (arg.startsWith('-')) {
      const known = ['json', 'help', ...(path.length === 0 ? ['version'] : [])];
      throw new CliError(`unknown option ${arg}${optionHint(arg, known)}`, here);
    }
    const next: Command | undefined = node.subcommands.find((c) => c.name === arg);
    if (!next) {
      const what = path.length === 0 ? 'command' : `subcommand of "${here}"`;
      const hint = didYouMean(
        arg,
        node.subcommands.map((c) => c.name),
        (name) => `"${name}"`,
      );
      throw new CliError(`unknown ${what}: ${JSON.stringify(arg)}${hint}`, here);
    }
    path.push(arg);
    node = next;
    i++;
  }
  return runLeaf(node, path, [...carried, ...argv.slice(i)], io, resources);
}

/** The version in package.json, read only when asked for. */
function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

function printHelpFor(root: GroupCommand, words: string[], io: Io): number {
  let node: Command = root;
  const path: string[] = [];
  for (const word of words) {
    const next: Command | undefined = isGroup(node)
      ? node.subcommands.find((c) => c.name === word)
      : undefined;
    if (!next) {
      const hint = isGroup(node)
        ? didYouMean(
            word,
            node.subcommands.map((c) => c.name),
            (name) => `"${[...path, name].join(' ')}"`,
          )
        : '';
      throw new CliError(`no command "${[...path, word].join(' ')}"${hint}`, '');
    }
    path.push(word);
    node = next;
  }
  io.stdout.write(isGroup(node) ? groupHelp(node, path) : leafHelp(node, path));
  return 0;
}

async function runLeaf(
  command: LeafCommand,
  path: string[],
  argv: string[],
  io: Io,
  resources: Resources,
): Promise<number> {
  const name = path.join(' ');
  const options: ParseArgsOptionsConfig = {};
  for (const [key, spec] of Object.entries({ ...command.options, ...COMMON_OPTIONS })) {
    options[key] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.multiple ? { multiple: true } : {}),
    };
    for (const alias of spec.aliases ?? [])
      options[alias] = { type: spec.type, ...(spec.multiple ? { multiple: true } : {}) };
  }
  let values: Record<string, string | boolean | Array<string | boolean> | undefined>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(leafHelp(command, path));
      return 0;
    }
    const shown = Object.keys({ ...command.options, ...COMMON_OPTIONS });
    throw new CliError(describeParseError(err, shown), name);
  }
  // An older name of an option (OptionSpec.aliases) gives the option its value.
  for (const [key, spec] of Object.entries(command.options)) {
    for (const alias of spec.aliases ?? []) {
      if (values[alias] === undefined) continue;
      if (values[key] !== undefined)
        throw new CliError(`give --${key} once (--${alias} is its older name)`, name);
      values[key] = values[alias];
      delete values[alias];
    }
  }
  if (values.help === true) {
    io.stdout.write(leafHelp(command, path));
    return 0;
  }
  for (const [key, spec] of Object.entries(command.options)) {
    if (spec.required && values[key] === undefined) throw new CliError(`missing option --${key}`, name);
  }

  const json = values.json === true;
  const colour = !json && wantsColour(io.stdout.isTTY, io.env);
  const style = makeStyle(colour);
  const ctx = makeContext(io, resources, style, json);
  const args = new Args(name, values as Record<string, string | boolean | string[] | undefined>);
  const output = await command.run(args, ctx);
  // Stored text reaches the terminal only escaped (src/shown-text.ts): each value where it is printed,
  // and the whole output again here, the net under them.
  if (output && json && output.jsonLines)
    io.stdout.write(output.jsonLines.map((line) => `${terminalJson(line)}\n`).join(''));
  else if (output)
    io.stdout.write(json ? `${terminalJson(output.json)}\n` : `${terminalOutput(output.text, colour)}\n`);
  return 0;
}

function makeContext(io: Io, resources: Resources, style: Context['style'], json: boolean): Context {
  let config: Promise<Config> | undefined;
  let passwords: PasswordHasher | undefined;
  /** The configuration, and a warning line each about variables that look like tokend's and are not. */
  const load = async (): Promise<Config> => {
    // A bad value throws a ConfigError, which runCli reports. Imported here so that --help and
    // argument errors never load it.
    const { unknownVariables, describeUnknownVariable } = await import('../unknown-variables.ts');
    const loaded = loadConfig(io.env);
    for (const unknown of unknownVariables(io.env)) {
      const warning = describeUnknownVariable(unknown);
      io.stderr.write(
        json
          ? `${JSON.stringify({ warning, variable: unknown.name })}\n`
          : `${PROGRAM}: warning: ${warning}\n`,
      );
    }
    return loaded;
  };
  const ctx: Context = {
    style,
    config: () => (config ??= load()),
    async store() {
      if (resources.store) return resources.store;
      const { openStore } = await import('../store/database.ts');
      const { database, dbPoolSize, dbTimeoutMs } = await ctx.config();
      resources.store = await openStore(database, {
        poolSize: Math.min(dbPoolSize, 2),
        timeoutMs: dbTimeoutMs,
      });
      return resources.store;
    },
    async passwords() {
      if (passwords) return passwords;
      const { PasswordHasher } = await import('../users/passwords.ts');
      const { bcryptCost, bcryptConcurrency } = await ctx.config();
      passwords = new PasswordHasher({ cost: bcryptCost, concurrency: bcryptConcurrency });
      return passwords;
    },
    async act() {
      const { actOutsideRequest, NO_EVENTS, eventsChannel } = await import('../auth/security-log.ts');
      const { redisUrl, redisKeyPrefix } = await ctx.config();
      if (redisUrl === undefined) return actOutsideRequest('cli', nowSeconds(), NO_EVENTS);
      const [{ RedisLink }, { OutboxEvents, waitingEvents }] = await Promise.all([
        import('../redis.ts'),
        import('../auth/event-outbox.ts'),
      ]);
      const store = await ctx.store();
      const quiet = { warn: () => undefined, info: () => undefined };
      resources.redis ??= new RedisLink(redisUrl, quiet);
      await resources.redis.waitReady(CLI_REDIS_WAIT_MS);
      const events = new OutboxEvents(store.db, resources.redis, eventsChannel(redisKeyPrefix));
      resources.publish = async () => {
        if (events.written === 0) return;
        await events.drain();
        if ((await waitingEvents(store.db)) === 0) return;
        const warning =
          'Redis is unreachable: this change was not published yet; it waits in the events outbox, ' +
          'and a tokend server with REDIS_URL publishes it once Redis answers';
        io.stderr.write(json ? `${JSON.stringify({ warning })}\n` : `${PROGRAM}: warning: ${warning}\n`);
      };
      return actOutsideRequest('cli', nowSeconds(), events);
    },
    askHidden: io.askHidden,
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
  return ctx;
}

/** parseArgs's error in tokend's words; an unknown option with the nearest of `options`. */
function describeParseError(err: unknown, options: string[]): string {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted}${optionHint(quoted, options)}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${JSON.stringify(quoted)} (options are written --name value)`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/argument missing/.test(message)) return `option ${quoted.split(' ')[0]} needs a value`;
      if (/ambiguous/.test(message))
        return `option ${quoted} needs a value (one starting with "-" is written ${quoted}=-VALUE)`;
      return message.charAt(0).toLowerCase() + message.slice(1);
  }
  return message;
}

/** One line for an error, also for AggregateError (a refused connection to every address) and codes. */
export function describeError(err: unknown): string {
  if (err instanceof CliError) return err.message;
  if (err instanceof ConfigError) return `invalid configuration: ${err.message}`;
  if (err instanceof AggregateError && err.message === '')
    return err.errors.map((e: unknown) => describeError(e)).join('; ');
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return err.message !== '' ? err.message : typeof code === 'string' ? code : err.name;
  }
  return String(err);
}

// ---- help text ------------------------------------------------------------------------------------

function optionUsage(key: string, spec: OptionSpec): string {
  const flag = spec.type === 'boolean' ? `--${key}` : `--${key} ${spec.value ?? 'VALUE'}`;
  return spec.required ? flag : `[${flag}]`;
}

function leafHelp(command: LeafCommand, path: string[]): string {
  const usage = [
    PROGRAM,
    ...path,
    ...Object.entries(command.options).map(([k, s]) => optionUsage(k, s)),
    '[--json]',
  ].join(' ');
  const common = command.jsonDescription
    ? { ...COMMON_OPTIONS, json: { ...JSON_OPTION, description: command.jsonDescription } }
    : COMMON_OPTIONS;
  const rows = Object.entries({ ...command.options, ...common }).map(([key, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : '';
    const value = spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : '';
    const notes = [spec.required ? 'required' : '', spec.multiple ? 'may be repeated' : ''].filter(Boolean);
    const described = notes.length > 0 ? `${spec.description} (${notes.join(', ')})` : spec.description;
    return [`${short}--${key}${value}`, described] as const;
  });
  return [
    `Usage: ${usage}`,
    '',
    command.summary,
    ...(command.description ? ['', command.description] : []),
    '',
    'Options:',
    columns(rows),
    ...(command.examples?.length ? ['', 'Examples:', ...command.examples.map((e) => `  ${e}`)] : []),
    '',
  ].join('\n');
}

function groupHelp(group: GroupCommand, path: string[]): string {
  const prefix = [PROGRAM, ...path].join(' ');
  const rows: Array<readonly [string, string]> = [];
  const walk = (commands: Command[], words: string[]) => {
    for (const c of commands) {
      if (isGroup(c)) walk(c.subcommands, [...words, c.name]);
      else rows.push([[...words, c.name].join(' '), c.summary]);
    }
  };
  walk(group.subcommands, []);
  return [
    `Usage: ${prefix} <command> [options]`,
    '',
    group.summary,
    ...(group.description ? ['', group.description] : []),
    '',
    'Commands:',
    columns(rows),
    '',
    `Every command takes --json (one JSON object on stdout; an error as one on stderr) and --help.`,
    `Run "${prefix} <command> --help" for a command's options.`,
    ...(path.length === 0
      ? [
          `"${PROGRAM} --version" (or -V) prints the version.`,
          `Exit codes: 0 done, 1 failed, ${EXIT_USAGE} a command line that cannot run as written.`,
        ]
      : []),
    '',
  ].join('\n');
}

function columns(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n');
}
