// What a tokend command module declares: its name, help text, options and what it runs.
// The dispatcher (run.ts) parses, validates required options, prints help, output and errors.
import type { Config } from '../config.ts';
import type { Store } from '../store/database.ts';
import type { PasswordHasher } from '../users/passwords.ts';
import type { Style } from './format.ts';
import type { Act } from '../auth/security-log.ts';
import { integerInRange } from '../decimal-integer.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** How the value reads in usage lines, e.g. `N` or `U`. */
  value?: string;
  description: string;
  required?: boolean;
  /** The option may be given several times (strings only). */
  multiple?: boolean;
  short?: string;
  /** Older names of the option, still accepted but never shown in help. */
  aliases?: string[];
}

interface CommandBase {
  /** The word typed on the command line, e.g. `create`. */
  name: string;
  /** One line for listings. */
  summary: string;
  /** Further paragraphs for `--help`. */
  description?: string;
  /** Complete example command lines for `--help`. */
  examples?: string[];
}

/** A command that runs. Returning nothing means it printed nothing and keeps running (`serve`). */
export interface LeafCommand extends CommandBase {
  options: Record<string, OptionSpec>;
  /** What --json does, for a command that does not print one JSON object on stdout (`serve`). */
  jsonDescription?: string;
  run(args: Args, ctx: Context): Promise<Output | void>;
}

/** A command made of subcommands, e.g. `user` → `create`, `list`, … */
export interface GroupCommand extends CommandBase {
  subcommands: Command[];
}

export type Command = LeafCommand | GroupCommand;

export const isGroup = (c: Command): c is GroupCommand => 'subcommands' in c;

/** What a command printed: the `--json` object and the human-readable text. */
export interface Output {
  json: Record<string, unknown>;
  text: string;
  /** Under --json, these objects one a line instead of `json` (JSON lines: `tokend audit`). */
  jsonLines?: ReadonlyArray<Record<string, unknown>>;
}

export interface Context {
  /** The configuration from the environment; a bad variable ends the process with one line naming it. */
  config(): Promise<Config>;
  /** The store, opened (and migrated) on first use and closed by the dispatcher when the command ends. */
  store(): Promise<Store>;
  passwords(): Promise<PasswordHasher>;
  /**
   * The act of this command for the security log (means cli), whose revocations and privilege changes
   * are published on Redis with REDIS_URL (the link made on first use, closed when the command ends).
   */
  act(): Promise<Act>;
  /** All of standard input (for `--password -`). */
  readStdin(): Promise<string>;
  /** Asks on the terminal without echoing the answer; undefined when standard input is not a terminal. */
  askHidden: ((question: string) => Promise<string>) | undefined;
  style: Style;
}

/**
 * An error to report as one line on stderr: a usage mistake (exit code 2) when `helpFor` is given,
 * else a failure (exit code 1).
 */
export class CliError extends Error {
  /** The command whose `--help` explains the mistake, when it was a usage mistake. */
  readonly helpFor: string | undefined;
  constructor(message: string, helpFor?: string) {
    super(message);
    this.helpFor = helpFor;
  }
}

type Values = Record<string, string | boolean | string[] | undefined>;

/** The parsed options of a leaf command, with typed and validated accessors. */
export class Args {
  /** The command's full name, e.g. `user create`, for error messages. */
  readonly command: string;
  private readonly values: Values;
  constructor(command: string, values: Values) {
    this.command = command;
    this.values = values;
  }

  optionalString(name: string): string | undefined {
    const v = this.values[name];
    return typeof v === 'string' ? v : undefined;
  }

  string(name: string): string {
    const v = this.optionalString(name);
    if (v === undefined) throw new CliError(`missing option --${name}`, this.command);
    return v;
  }

  strings(name: string): string[] {
    const v = this.values[name];
    return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  optionalInteger(name: string, min: number, max: number): number | undefined {
    const raw = this.optionalString(name);
    return raw === undefined ? undefined : this.inRange(name, raw, min, max);
  }

  integer(name: string, min: number, max: number): number {
    return this.inRange(name, this.string(name), min, max);
  }

  /** An integer option's value (spaces around allowed), or the usage error naming its range. */
  private inRange(name: string, raw: string, min: number, max: number): number {
    const n = integerInRange(raw.trim(), min, max);
    if (n === undefined)
      throw new CliError(
        `--${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`,
        this.command,
      );
    return n;
  }
}
