// Argument helpers shared by the user and token commands.
import type { Store } from '../store/database.ts';
import { findUserByIdOrName, type UserRow } from '../users/repository.ts';
import { CliError, type Args, type Context } from './command.ts';

/** The user named by `--user U` (an id or a username), or a CliError. */
export async function requireUser(store: Store, ref: string): Promise<UserRow> {
  const user = await findUserByIdOrName(store.db, ref);
  if (!user) throw new CliError(`no user with id or username ${JSON.stringify(ref)}`);
  return user;
}

/** `--password P`, or with `--password -` standard input minus one trailing newline (kept out of `ps`). */
export async function readPassword(args: Args, ctx: Context): Promise<string> {
  const given = args.string('password');
  const password = given === '-' ? (await ctx.readStdin()).replace(/\r?\n$/, '') : given;
  if (password === '') throw new CliError('--password: the password must not be empty', args.command);
  return password;
}
