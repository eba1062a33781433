// tokend token …: issue, list and revoke API tokens without HTTP (same service as POST /v1/tokens).
import {
  isBanned,
  limit,
  ownerHoldsNothing,
  TokenPrivilege,
  tokenPrivilegeNames,
} from '../../auth/privileges.ts';
import { MAX_ID } from '../../store/schema.ts';
import { deleteTokenById } from '../../auth/revocation.ts';
import { listAllTokensOfUser } from '../../tokens/repository.ts';
import { descriptionProblem } from '../../tokens/description.ts';
import { editToken } from '../../tokens/edit.ts';
import { TokenCapReached, mintToken, type MintedToken } from '../../auth/mint.ts';
import { nowSeconds } from '../../auth/clock.ts';
import { CliError, type GroupCommand, type LeafCommand, type OptionSpec } from '../command.ts';
import { table } from '../format.ts';
import { findUserOrFail } from '../lookup.ts';
import { parseTokenPrivileges } from '../privilege-option.ts';
import { terminalText } from '../../shown-text.ts';
import { plainTime } from '../../utc-time.ts';

const userOption: OptionSpec = {
  type: 'string',
  value: 'U',
  required: true,
  description: 'the owner: a user id, or a username',
};

/** Token privileges that limit() grants to no owner at all, whatever their user privileges. */
const NEVER_GRANTED = Object.entries(TokenPrivilege)
  .filter(([, bit]) => limit(bit, 0xffffffff) === 0)
  .map(([name]) => name);

const names = (privileges: number): string => tokenPrivilegeNames(privileges).join(' | ') || 'none';

const create: LeafCommand = {
  name: 'create',
  summary: 'Issue a token for a user and print its secret (shown only this once)',
  description:
    'The privileges granted are limit(requested, owner): bits the owner may not hold are dropped,\n' +
    'and the output names them (with --json, in "not_granted").' +
    (NEVER_GRANTED.length > 0
      ? ` ${NEVER_GRANTED.join(', ')} ${NEVER_GRANTED.length === 1 ? 'is' : 'are'} never granted (no user holds what ${NEVER_GRANTED.length === 1 ? 'it requires' : 'they require'}).`
      : ''),
  examples: ['tokend token create --user alice --privileges ReadConfidential,Write --description "my bot"'],
  options: {
    user: userOption,
    privileges: {
      type: 'string',
      value: 'N',
      description: 'requested token privileges: a bit mask or names, e.g. ReadConfidential,Write (default 0)',
    },
    description: { type: 'string', value: 'D', description: 'free text stored with the token' },
    private: {
      type: 'boolean',
      description: 'never list the token in GET /v1/tokens (as the tokens of a web login)',
    },
    force: { type: 'boolean', description: 'create it even beyond TOKENS_PER_USER_MAX' },
  },
  async run(args, ctx) {
    const raw = args.optionalString('privileges');
    const requested = raw === undefined ? 0 : parseTokenPrivileges(raw, args.command);
    const description = args.optionalString('description') ?? '';
    const store = await ctx.store();
    const descriptionRefused = descriptionProblem(description, store.layout);
    if (descriptionRefused !== undefined)
      throw new CliError(`--description: the description ${descriptionRefused}`, args.command);
    const isPrivate = args.flag('private');
    const owner = await findUserOrFail(store, args.string('user'));
    const cap = args.flag('force') ? 'none' : (await ctx.config()).tokensPerUserMax;
    let token: MintedToken;
    try {
      token = await mintToken(store.db, {
        layout: store.layout,
        userId: owner.id,
        requested,
        description,
        private: isPrivate,
        now: nowSeconds(),
        cap,
        act: await ctx.act(),
      });
    } catch (err) {
      if (err instanceof TokenCapReached)
        throw new CliError(
          `user ${owner.id} ${terminalText(owner.username)} already holds ${err.max} live API tokens (TOKENS_PER_USER_MAX); ` +
            'revoke some, or pass --force to go beyond the limit',
        );
      throw err;
    }
    const privileges = token.privileges;

    const { style } = ctx;
    const lines = [
      `Token ${style.bold(String(token.id))} for user ${owner.id} ${terminalText(owner.username)}: ` +
        `privileges ${privileges} (${names(privileges)}), ${isPrivate ? 'private' : 'public'}`,
    ];
    const granted = new Set(tokenPrivilegeNames(privileges));
    const refused = tokenPrivilegeNames(requested).filter((name) => !granted.has(name));
    if (refused.length > 0)
      lines.push(style.yellow(`Not granted (the owner may not hold them): ${refused.join(' | ')}`));
    if (ownerHoldsNothing(owner.privileges))
      lines.push(style.yellow('The owner is banned: the token carries no privileges while they are.'));
    else if (isBanned(owner.privileges))
      lines.push(
        style.yellow(
          'The owner is restricted (no UserPublic): the token carries what they may hold, but they cannot create tokens themselves.',
        ),
      );
    lines.push(`Secret (shown only once): ${style.green(token.secret)}`);
    return {
      json: {
        id: token.id,
        token: token.secret,
        user_id: owner.id,
        username: owner.username,
        privileges,
        description,
        private: isPrivate,
        not_granted: refused,
      },
      text: lines.join('\n'),
    };
  },
};

const list: LeafCommand = {
  name: 'list',
  summary: "List a user's tokens, private ones too (never secrets or hashes)",
  options: { user: userOption },
  async run(args, ctx) {
    const store = await ctx.store();
    const owner = await findUserOrFail(store, args.string('user'));
    const tokens = (await listAllTokensOfUser(store.db, owner.id)).map((t) => ({
      id: t.id,
      privileges: t.privileges,
      description: t.description,
      private: t.private !== 0,
      session: t.session !== 0,
      last_updated: t.last_updated,
      expires_at: t.expires_at,
    }));
    const text =
      tokens.length === 0
        ? `User ${owner.id} ${terminalText(owner.username)} has no tokens.`
        : table(
            ctx.style,
            ['ID', 'PRIVILEGES', 'KIND', 'LAST USED (UTC)', 'EXPIRES (UTC)', 'DESCRIPTION'],
            tokens.map((t) => [
              String(t.id),
              String(t.privileges),
              t.session ? 'web session' : t.private ? 'private' : 'public',
              plainTime(t.last_updated),
              t.expires_at === null ? 'never' : plainTime(t.expires_at),
              t.description,
            ]),
          );
    return { json: { user_id: owner.id, username: owner.username, tokens }, text };
  },
};

const revoke: LeafCommand = {
  name: 'revoke',
  summary: 'Delete a token by its id (it stops working at once)',
  options: { id: { type: 'string', value: 'N', required: true, description: 'the token id' } },
  async run(args, ctx) {
    const id = args.integer('id', 1, MAX_ID);
    const store = await ctx.store();
    if (!(await deleteTokenById(store.db, id, await ctx.act(), 'operator')))
      throw new CliError(`no token with id ${id}`);
    return { json: { id, revoked: true }, text: `Token ${id} revoked.` };
  },
};

const edit: LeafCommand = {
  name: 'edit',
  summary: "Change a public API token's description or privileges; its secret stays the same",
  description:
    'The privileges become limit(requested, owner), as at creation: bits the owner may not hold are\n' +
    "dropped and named. The change is a token.edited event in the owner's security log.",
  examples: ['tokend token edit --id 42 --privileges ReadConfidential --description "read-only bot"'],
  options: {
    id: { type: 'string', value: 'N', required: true, description: 'the token id' },
    privileges: {
      type: 'string',
      value: 'N',
      description: 'the new token privileges: a bit mask or names, e.g. ReadConfidential,Write',
    },
    description: { type: 'string', value: 'D', description: 'the new description' },
  },
  async run(args, ctx) {
    const id = args.integer('id', 1, MAX_ID);
    const raw = args.optionalString('privileges');
    const requested = raw === undefined ? undefined : parseTokenPrivileges(raw, args.command);
    const description = args.optionalString('description');
    if (requested === undefined && description === undefined)
      throw new CliError('nothing to change: give --privileges, --description or both', args.command);
    const store = await ctx.store();
    const result = await editToken(store.db, {
      layout: store.layout,
      tokenId: id,
      privileges: requested,
      description,
      now: nowSeconds(),
      act: await ctx.act(),
    });
    if (result.kind === 'bad-description')
      throw new CliError(`--description: the description ${result.problem}`, args.command);
    if (result.kind === 'not-found') throw new CliError(`no public API token with id ${id} (live)`);
    const granted = new Set(tokenPrivilegeNames(result.privileges));
    const refused =
      requested === undefined ? [] : tokenPrivilegeNames(requested).filter((n) => !granted.has(n));
    const lines = [
      `Token ${ctx.style.bold(String(id))} of user ${result.userId}: privileges ${result.privileges} ` +
        `(${names(result.privileges)}), description ${JSON.stringify(terminalText(result.description))}`,
      result.changed.length === 0 ? 'Nothing changed.' : `Changed: ${result.changed.join('; ')}`,
    ];
    if (refused.length > 0)
      lines.push(ctx.style.yellow(`Not granted (the owner may not hold them): ${refused.join(' | ')}`));
    return {
      json: {
        id,
        user_id: result.userId,
        privileges: result.privileges,
        description: result.description,
        changed: result.changed,
        not_granted: refused,
      },
      text: lines.join('\n'),
    };
  },
};

export const tokenCommand: GroupCommand = {
  name: 'token',
  summary: 'Manage API tokens',
  subcommands: [create, list, edit, revoke],
};
