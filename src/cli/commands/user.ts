// tokend user …: create users and manage their privileges, bans and passwords.
import { isBanned, ownerHoldsNothing, UserPrivilege, userPrivilegeNames } from '../../auth/privileges.ts';
import { isUniqueViolation } from '../../store/errors.ts';
import { refuseInPlace } from '../in-place.ts';
import { explicitIdProblem, MAX_EXPLICIT_ID } from '../../store/ids.ts';
import { CURRENT_PASSWORD_VERSION, LEGACY_PASSWORD_VERSION } from '../../users/passwords.ts';
import {
  findUserById,
  findUserByUsername,
  insertUser,
  listUsers,
  setUserPrivileges,
  type UserRow,
} from '../../users/repository.ts';
import { nowSeconds } from '../../auth/clock.ts';
import { usernameProblem } from '../../users/username-rules.ts';
import { changePassword, signOutEverywhere } from '../../auth/revocation.ts';
import { endGrantsOfUser } from '../../oauth/applications.ts';
import { CliError, type GroupCommand, type LeafCommand, type OptionSpec } from '../command.ts';
import type { Style } from '../format.ts';
import { table } from '../format.ts';
import { PASSWORD_OPTIONS, readPassword, findUserOrFail } from '../lookup.ts';
import { parseUserPrivileges } from '../privilege-option.ts';
import { decimalInteger } from '../../decimal-integer.ts';
import { terminalText } from '../../shown-text.ts';

/** UserPublic + UserNormal: an ordinary active user. */
const ACTIVE = UserPrivilege.UserPublic | UserPrivilege.UserNormal;

const userOption: OptionSpec = {
  type: 'string',
  value: 'U',
  required: true,
  description: 'the user: an id, or a username',
};

const describePrivileges = (style: Style, privileges: number): string => {
  const names = userPrivilegeNames(privileges);
  return `${privileges}${names.length ? style.dim(` (${names.join(' | ')})`) : ''}`;
};

const userSummary = (user: Pick<UserRow, 'id' | 'username' | 'privileges'>) => ({
  id: user.id,
  username: user.username,
  privileges: user.privileges,
  banned: isBanned(user.privileges),
});

/**
 * What a command that sets privileges says when they ban or restrict the user (isBanned decides; whether
 * their tokens still carry anything, ownerHoldsNothing): a text line, and the `warning` field of its
 * `--json` object. Nothing when they do not.
 */
function warnIfBanned(style: Style, privileges: number): { lines: string[]; json: { warning?: string } } {
  if (!isBanned(privileges)) return { lines: [], json: {} };
  const warning = ownerHoldsNothing(privileges)
    ? `privileges ${privileges} ban the user (an active user holds both UserPublic and UserNormal): ` +
      'they cannot log in and their tokens carry no privileges; "tokend user unban" lifts the ban.'
    : `privileges ${privileges} restrict the user (UserNormal without UserPublic): they cannot log in ` +
      'or create tokens, and their tokens keep what their privileges allow; "tokend user unban" lifts it.';
  return { lines: [style.yellow(`Warning: ${warning}`)], json: { warning } };
}

/** Sets or clears UserPublic+UserNormal without touching any other bit, also above 2^31. */
const withActiveBits = (privileges: number, active: boolean): number =>
  Number(active ? BigInt(privileges) | BigInt(ACTIVE) : BigInt(privileges) & ~BigInt(ACTIVE));

const create: LeafCommand = {
  name: 'create',
  summary: 'Create a user (privileges default to 3: UserPublic + UserNormal)',
  description:
    'Prints the new user id. Privileges without UserPublic or UserNormal create a banned user (it says so).',
  examples: [
    'tokend user create --username alice                 # asks for the password',
    'printf "%s\\n" "$PW" | tokend user create --username admin --password-stdin --privileges 571',
  ],
  options: {
    username: { type: 'string', value: 'NAME', required: true, description: 'the username' },
    ...PASSWORD_OPTIONS,
    'user-id': {
      type: 'string',
      value: 'N',
      aliases: ['id'],
      description: `an explicit user id, 1 to ${MAX_EXPLICIT_ID} (default: the next free id)`,
    },
    privileges: {
      type: 'string',
      value: 'N',
      description: 'a bit mask or user privilege names, e.g. UserPublic,UserNormal,UserDonor (default 3)',
    },
    'password-version': {
      type: 'string',
      value: 'N',
      description:
        `${CURRENT_PASSWORD_VERSION} (default) or ${LEGACY_PASSWORD_VERSION}: a legacy password, ` +
        'which the API refuses with 418',
    },
  },
  async run(args, ctx) {
    refuseInPlace((await ctx.config()).database, 'tokend user create');
    const username = args.string('username').trim();
    const problem = usernameProblem(username);
    if (problem !== undefined) throw new CliError(`--username: ${problem}`, args.command);
    const rawId = args.optionalString('user-id')?.trim();
    const id = rawId === undefined ? undefined : decimalInteger(rawId);
    if (rawId !== undefined && id === undefined)
      throw new CliError(`--user-id: expected an integer, got ${JSON.stringify(rawId)}`, args.command);
    const idProblem = id === undefined ? undefined : explicitIdProblem(id);
    if (idProblem !== undefined) throw new CliError(`--user-id: ${idProblem}`, args.command);
    const rawPrivileges = args.optionalString('privileges');
    const privileges =
      rawPrivileges === undefined ? ACTIVE : parseUserPrivileges(rawPrivileges, args.command);
    const passwordVersion =
      args.optionalInteger('password-version', LEGACY_PASSWORD_VERSION, CURRENT_PASSWORD_VERSION) ??
      CURRENT_PASSWORD_VERSION;
    const password = await readPassword(args, ctx);

    const store = await ctx.store();
    const sameName = await findUserByUsername(store.db, username);
    if (sameName)
      throw new CliError(
        `a user named ${JSON.stringify(sameName.username)} already exists (id ${sameName.id})`,
      );
    if (id !== undefined && (await findUserById(store.db, id)))
      throw new CliError(`user id ${id} is already taken`);
    const passwordHash = await (await ctx.passwords()).hash(password);
    let newId: number;
    try {
      newId = await insertUser(store.db, {
        id,
        username,
        passwordHash,
        passwordVersion,
        privileges,
        now: nowSeconds(),
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new CliError('a user with that id or username already exists');
      throw err;
    }
    const warned = warnIfBanned(ctx.style, privileges);
    return {
      json: {
        id: newId,
        username,
        privileges,
        banned: isBanned(privileges),
        password_version: passwordVersion,
        ...warned.json,
      },
      text: [
        `Created user ${ctx.style.bold(String(newId))} ${terminalText(username)}, privileges ${describePrivileges(ctx.style, privileges)}`,
        ...warned.lines,
      ].join('\n'),
    };
  },
};

const setPrivileges: LeafCommand = {
  name: 'set-privileges',
  summary: "Replace a user's privileges (their tokens follow with the next request)",
  description:
    'Privileges without UserPublic or UserNormal ban the user (it says so); "tokend user ban" does that\n' +
    'and keeps every other bit.',
  examples: ['tokend user set-privileges --user alice --privileges UserPublic,UserNormal,UserDonor'],
  options: {
    user: userOption,
    privileges: {
      type: 'string',
      value: 'N',
      required: true,
      description: 'the new user privileges: a bit mask or names, e.g. UserPublic,UserNormal,AdminAccessRAP',
    },
  },
  async run(args, ctx) {
    const privileges = parseUserPrivileges(args.string('privileges'), args.command);
    const store = await ctx.store();
    const user = await findUserOrFail(store, args.string('user'));
    await setUserPrivileges(store.db, user.id, privileges, user.privileges, await ctx.act());
    const warned = warnIfBanned(ctx.style, privileges);
    return {
      json: {
        ...userSummary({ ...user, privileges }),
        previous_privileges: user.privileges,
        ...warned.json,
      },
      text: [
        `User ${user.id} ${terminalText(user.username)}: privileges ${user.privileges} → ${describePrivileges(ctx.style, privileges)}`,
        ...warned.lines,
      ].join('\n'),
    };
  },
};

function banCommand(ban: boolean): LeafCommand {
  return {
    name: ban ? 'ban' : 'unban',
    summary: ban
      ? 'Ban a user: clear UserPublic and UserNormal (other bits stay); their tokens carry no privileges'
      : 'Unban a user: set UserPublic and UserNormal (other bits stay)',
    options: { user: userOption },
    async run(args, ctx) {
      const store = await ctx.store();
      const user = await findUserOrFail(store, args.string('user'));
      const privileges = withActiveBits(user.privileges, !ban);
      if (privileges !== user.privileges)
        await setUserPrivileges(store.db, user.id, privileges, user.privileges, await ctx.act());
      const state = ban ? ctx.style.red('banned') : ctx.style.green('active');
      return {
        json: userSummary({ ...user, privileges }),
        text: `User ${user.id} ${terminalText(user.username)} is ${state} (privileges ${privileges})`,
      };
    },
  };
}

const passwd: LeafCommand = {
  name: 'passwd',
  summary: "Set a user's password (password version 2: bcrypt over MD5); ends the user's web sessions",
  options: {
    user: userOption,
    ...PASSWORD_OPTIONS,
  },
  async run(args, ctx) {
    const password = await readPassword(args, ctx);
    const store = await ctx.store();
    const user = await findUserOrFail(store, args.string('user'));
    const hash = await (await ctx.passwords()).hash(password);
    const { sessionsEnded } = await changePassword(
      store.db,
      user.id,
      hash,
      CURRENT_PASSWORD_VERSION,
      await ctx.act(),
    );
    return {
      json: {
        id: user.id,
        username: user.username,
        password_version: CURRENT_PASSWORD_VERSION,
        sessions_ended: sessionsEnded,
      },
      text: `Password of user ${user.id} ${terminalText(user.username)} changed; ${plural(sessionsEnded, 'web session')} ended.`,
    };
  },
};

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

const signOutEverywhereCommand: LeafCommand = {
  name: 'sign-out-everywhere',
  summary: 'End every web session, OAuth grant and API token of a user, at once (e.g. after a leak)',
  description:
    'Deletes, for that user: every web session, every API token (public and private), every OAuth access\n' +
    'and refresh token, every unexchanged authorization code and every application approval. Each of them\n' +
    'answers as unknown from the next request on, on every instance. The user and their password stay.',
  examples: ['tokend user sign-out-everywhere --user alice'],
  options: { user: userOption },
  async run(args, ctx) {
    const store = await ctx.store();
    const user = await findUserOrFail(store, args.string('user'));
    const ended = await signOutEverywhere(store.db, user.id, endGrantsOfUser, await ctx.act());
    return {
      json: {
        id: user.id,
        username: user.username,
        sessions_ended: ended.sessions,
        api_tokens_revoked: ended.apiTokens,
        oauth_tokens_revoked: ended.oauthTokens,
        applications_disconnected: ended.applications,
      },
      text:
        `User ${user.id} ${terminalText(user.username)} is signed out everywhere: ${plural(ended.sessions, 'web session')} ended, ` +
        `${plural(ended.apiTokens, 'API token')} and ${plural(ended.oauthTokens, 'OAuth token')} revoked, ` +
        `${plural(ended.applications, 'application')} disconnected.`,
    };
  },
};

const list: LeafCommand = {
  name: 'list',
  summary: 'List every user (id, username, privileges, banned)',
  options: {},
  async run(_args, ctx) {
    const store = await ctx.store();
    const users = (await listUsers(store.db)).map(userSummary);
    const { style } = ctx;
    const text =
      users.length === 0
        ? 'No users yet.'
        : table(
            style,
            ['ID', 'USERNAME', 'PRIVILEGES', 'STATE'],
            users.map((u) => [
              String(u.id),
              u.username,
              String(u.privileges),
              u.banned ? { plain: 'banned', shown: style.red('banned') } : 'active',
            ]),
          );
    return { json: { users }, text };
  },
};

export const userCommand: GroupCommand = {
  name: 'user',
  summary: 'Manage users',
  subcommands: [
    create,
    setPrivileges,
    banCommand(true),
    banCommand(false),
    passwd,
    signOutEverywhereCommand,
    list,
  ],
};
