// tokend client …: register, list, give a new secret to and delete OAuth clients (an operator acting for
// a user, as the user would on the applications page), and mint bearer tokens for operators and tests.
import { OAuthError } from '../../oauth/errors.ts';
import {
  ClientValidationError,
  DuplicateClientName,
  createClient,
  deleteClient,
  findClient,
  isConfidential,
  listClients,
  listClientsOfOwner,
  rotateClientSecret,
  type OAuthClient,
} from '../../oauth/clients.ts';
import { issueAccessToken } from '../../oauth/issue.ts';
import { formatScope, parseScope, SCOPE_NAMES } from '../../oauth/scopes.ts';
import { newOAuthSecret, sha256Hex } from '../../oauth/secrets.ts';
import { rfc3339 } from '../../auth/credentials.ts';
import { nowSeconds } from '../../auth/clock.ts';
import type { Store } from '../../store/database.ts';
import { CliError, type GroupCommand, type LeafCommand, type OptionSpec } from '../command.ts';
import { table } from '../format.ts';
import { findUserOrFail } from '../lookup.ts';
import { terminalText } from '../../shown-text.ts';

const describeClient = (c: OAuthClient) => ({
  id: c.id,
  name: c.name,
  owner_id: c.ownerId,
  avatar: c.avatar,
  redirect_uris: c.redirectUris,
  public: !isConfidential(c),
  created: rfc3339(c.created),
});

/** The owner named by --owner, or else the user with the lowest id (the operator's first account). */
async function resolveOwner(store: Store, ref: string | undefined) {
  if (ref !== undefined) return findUserOrFail(store, ref);
  const first = await store.db
    .selectFrom('users')
    .select(['id', 'username'])
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!first) throw new CliError('no users exist yet: create one first, or pass --owner U');
  return first;
}

const create: LeafCommand = {
  name: 'create',
  summary: 'Register an OAuth client and print its id and secret (the secret is shown only this once)',
  description: 'Every client must use PKCE (S256), confidential or public.',
  examples: [
    'tokend client create --name "Score Tracker" --redirect-uri https://tracker.example/callback --owner alice',
  ],
  options: {
    name: {
      type: 'string',
      value: 'NAME',
      required: true,
      description: 'the name users see on the consent page',
    },
    'redirect-uri': {
      type: 'string',
      value: 'URI',
      required: true,
      multiple: true,
      description: 'an allowed redirect URI, matched exactly',
    },
    owner: {
      type: 'string',
      value: 'U',
      description: "the owner's user id or username (default: the user with the lowest id)",
    },
    avatar: { type: 'string', value: 'URL', description: 'an http(s) URL of the app icon' },
    public: {
      type: 'boolean',
      description: 'no client secret: a browser or native app, which cannot keep one',
    },
  },
  async run(args, ctx) {
    const store = await ctx.store();
    const owner = await resolveOwner(store, args.optionalString('owner'));
    let created;
    try {
      created = await createClient(
        store.db,
        {
          name: args.string('name'),
          ownerId: owner.id,
          avatar: args.optionalString('avatar') ?? '',
          redirectUris: args.strings('redirect-uri'),
          public: args.flag('public'),
          now: nowSeconds(),
        },
        await ctx.act(),
      );
    } catch (err) {
      // A name the owner has already used is no usage mistake: the command was right, the name is taken.
      if (err instanceof DuplicateClientName) throw new CliError(err.message);
      if (err instanceof ClientValidationError) throw new CliError(err.message, args.command);
      throw err;
    }
    const { client, secret } = created;
    const { style } = ctx;
    const lines = [
      `Client ${style.bold(client.id)} "${terminalText(client.name)}" owned by user ${owner.id} ${terminalText(owner.username)}`,
      `Redirect URIs: ${client.redirectUris.join(' ')}`,
      secret === undefined
        ? 'Public client: no secret; it must use PKCE.'
        : `Secret (shown only once): ${style.green(secret)}`,
    ];
    return {
      json: {
        id: client.id,
        secret: secret ?? null,
        name: client.name,
        owner_id: client.ownerId,
        avatar: client.avatar,
        redirect_uris: client.redirectUris,
        public: secret === undefined,
      },
      text: lines.join('\n'),
    };
  },
};

const list: LeafCommand = {
  name: 'list',
  summary:
    "List registered OAuth clients, or one owner's with how many users authorized each (never secrets)",
  examples: ['tokend client list', 'tokend client list --owner alice --json'],
  options: {
    owner: {
      type: 'string',
      value: 'U',
      description: "only this owner's clients (a user id or username), with their authorized users",
    },
  },
  async run(args, ctx) {
    const store = await ctx.store();
    const ownerRef = args.optionalString('owner');
    const owner = ownerRef === undefined ? undefined : await findUserOrFail(store, ownerRef);
    const clients = owner
      ? (await listClientsOfOwner(store.db, owner.id)).map((c) => ({
          ...describeClient(c),
          authorized_users: c.authorizedUsers,
        }))
      : (await listClients(store.db)).map(describeClient);
    const text =
      clients.length === 0
        ? owner
          ? `User ${owner.id} ${terminalText(owner.username)} has no clients.`
          : 'No clients are registered.'
        : table(
            ctx.style,
            ['ID', 'NAME', 'OWNER', 'TYPE', 'REDIRECT URIS', ...(owner ? ['USERS'] : [])],
            clients.map((c) => [
              c.id,
              c.name,
              String(c.owner_id),
              c.public ? 'public' : 'confidential',
              c.redirect_uris.join(' '),
              ...('authorized_users' in c ? [String(c.authorized_users)] : []),
            ]),
          );
    return { json: { clients }, text };
  },
};

const CLIENT_OPTION: Record<string, OptionSpec> = {
  client: { type: 'string', value: 'ID', required: true, aliases: ['id'], description: 'the client id' },
};

/** The client named by --client, or a failure naming the id. */
async function findClientOrFail(store: Store, id: string): Promise<OAuthClient> {
  const client = await findClient(store.db, id);
  if (!client) throw new CliError(`no client with id ${JSON.stringify(id)}`);
  return client;
}

const rotate: LeafCommand = {
  name: 'rotate',
  summary: 'Give a confidential client a new secret and print it once; the old one stops at once',
  description: "A public client has no secret. The users' approvals stay whatever the options.",
  examples: ['tokend client rotate --client 3f2a… --end-tokens'],
  options: {
    ...CLIENT_OPTION,
    'end-tokens': {
      type: 'boolean',
      description: 'also end every access and refresh token and unexchanged code of the client',
    },
  },
  async run(args, ctx) {
    const store = await ctx.store();
    const client = await findClientOrFail(store, args.string('client'));
    if (!isConfidential(client))
      throw new CliError(`client ${client.id} is public: it has no secret to replace`);
    const rotated = await rotateClientSecret(store.db, client, args.flag('end-tokens'), await ctx.act());
    if (!rotated) throw new CliError(`no client with id ${JSON.stringify(client.id)}`);
    return {
      json: { id: client.id, secret: rotated.secret, ended_tokens: rotated.ended },
      text:
        `Client ${ctx.style.bold(client.id)} "${terminalText(client.name)}" has a new secret; the old one no longer works.` +
        (args.flag('end-tokens') ? `\nEnded ${rotated.ended} tokens and codes.` : '') +
        `\nSecret (shown only once): ${ctx.style.green(rotated.secret)}`,
    };
  },
};

const remove: LeafCommand = {
  name: 'delete',
  summary: 'Delete a client; its codes, tokens and approvals end with it',
  options: CLIENT_OPTION,
  async run(args, ctx) {
    const id = args.string('client');
    const store = await ctx.store();
    if (!(await deleteClient(store.db, id, await ctx.act())))
      throw new CliError(`no client with id ${JSON.stringify(id)}`);
    return { json: { id, deleted: true }, text: `Client ${id} deleted, with every token issued to it.` };
  },
};

const token: LeafCommand = {
  name: 'token',
  summary: 'Mint a bearer access token for a user and client, without the browser flow (operators, tests)',
  description: `The scopes are ${SCOPE_NAMES.join(', ')}. The token expires like any other.`,
  examples: ['tokend client token --client 3f2a… --user alice --scope "read_confidential write"'],
  options: {
    client: { type: 'string', value: 'ID', required: true, description: 'the client id' },
    user: { type: 'string', value: 'U', required: true, description: 'the user the token acts for' },
    scope: { type: 'string', value: 'SCOPE', description: 'space-separated scopes (default: none)' },
  },
  async run(args, ctx) {
    let scope: string;
    try {
      scope = formatScope(parseScope(args.optionalString('scope')));
    } catch (err) {
      if (err instanceof OAuthError) throw new CliError(`--scope: ${err.message}`, args.command);
      throw err;
    }
    const store = await ctx.store();
    const client = await findClientOrFail(store, args.string('client'));
    const user = await findUserOrFail(store, args.string('user'));
    // A minted token is its own grant: revoking it touches nothing else.
    const family = sha256Hex(newOAuthSecret());
    const issued = await issueAccessToken(
      store.db,
      { clientId: client.id, userId: user.id, scope, family },
      nowSeconds(),
    );
    return {
      json: { ...issued, client_id: client.id, user_id: user.id },
      text:
        `Bearer token for user ${user.id} ${terminalText(user.username)} via ${terminalText(client.name)}, scope "${scope}", ` +
        `expires in ${issued.expires_in} s\n` +
        `Access token (shown only once): ${ctx.style.green(issued.access_token)}`,
    };
  },
};

export const clientCommand: GroupCommand = {
  name: 'client',
  summary: 'Manage OAuth clients and bearer tokens',
  subcommands: [create, list, rotate, remove, token],
};
