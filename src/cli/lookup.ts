// Argument helpers shared by the user and token commands.
import type { Store } from '../store/database.ts';
import { findUserByIdOrName, type UserRow } from '../users/repository.ts';
import { CliError, type Args, type Context, type OptionSpec } from './command.ts';

/** The user named by `--user U` (an id or a username), or a CliError. */
export async function findUserOrFail(store: Store, ref: string): Promise<UserRow> {
  const user = await findUserByIdOrName(store.db, ref);
  if (!user) throw new CliError(`no user with id or username ${JSON.stringify(ref)}`);
  return user;
}

/** The options of a command that takes a password: `--password-stdin`, or `--password P` for scripts. */
export const PASSWORD_OPTIONS: Record<string, OptionSpec> = {
  'password-stdin': {
    type: 'boolean',
    description: 'read the password from standard input (one line); on a terminal tokend asks for it instead',
  },
  password: {
    type: 'string',
    value: 'P',
    description: 'the password on the command line (visible to other users in `ps`; "-": read stdin)',
  },
};

/**
 * The password: `--password-stdin` (or `--password -`) reads standard input minus one trailing newline;
 * `--password P` takes it from the command line (visible in the process list); with neither, a terminal
 * is asked without echo, twice (every caller sets a new password).
 */
export async function readPassword(args: Args, ctx: Context): Promise<string> {
  const given = args.optionalString('password');
  const fromStdin = args.flag('password-stdin');
  if (given !== undefined && fromStdin)
    throw new CliError('give either --password or --password-stdin, not both', args.command);
  let password: string;
  if (fromStdin || given === '-') password = (await ctx.readStdin()).replace(/\r?\n$/, '');
  else if (given !== undefined) password = given;
  else if (ctx.askHidden) {
    // A new password typed unseen is asked twice, so a typo does not become the password.
    password = await ctx.askHidden('Password: ');
    if (password !== '' && (await ctx.askHidden('Password again: ')) !== password)
      throw new CliError(
        'the two passwords typed differ: nothing was changed; run the command again',
        args.command,
      );
  } else
    throw new CliError(
      'no password: pass --password-stdin and write it to standard input (or --password P, which other users can see in `ps`)',
      args.command,
    );
  if (password === '') throw new CliError('the password must not be empty', args.command);
  return password;
}
