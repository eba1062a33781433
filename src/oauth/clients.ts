// Registered clients: registration (the applications page, the CLI), listing, changes, a new secret,
// deletion, and the domain view used by the endpoints. What a name, redirect URI or avatar must be is
// decided here for every caller; one owner's clients have different names, and at most `max` of them are
// registered on the page.
import type { Db } from '../store/database.ts';
import { usernameSafe } from '../users/username.ts';
import { endGrantsOfApplication } from './applications.ts';
import {
  consentCounts,
  countClientsOfOwner,
  deleteClientById,
  findClientById,
  insertClient,
  listClientRows,
  listClientRowsOfOwner,
  lockUser,
  ownerHasClientNamed,
  possibleClientId,
  replaceClientSecretHash,
  updateClientRow,
  type ClientRow,
} from './repository.ts';
import { newClientId, newOAuthSecret, sha256Hex } from './secrets.ts';
import { recordEvent, withEvents, type Act } from '../auth/security-log.ts';
import { blankToTheEye, showableTextProblem } from '../shown-text.ts';

export interface OAuthClient {
  id: string;
  name: string;
  ownerId: number;
  avatar: string;
  redirectUris: string[];
  /** SHA-256 hex of the secret; undefined for a public client */
  secretHash: string | undefined;
  created: number;
}

/**
 * What a banned owner's application is told: the token endpoint refuses it every grant
 * (unauthorized_client), the authorization endpoint shows it on a page; introspection calls its tokens
 * inactive, and the tokens carry no privileges (src/auth/privileges.ts `bearerPrivileges`).
 */
export const APPLICATION_SUSPENDED = 'This application is suspended: its owner’s account is banned.';

export const isConfidential = (client: OAuthClient): boolean => client.secretHash !== undefined;

function toClient(row: ClientRow): OAuthClient {
  const uris: unknown = JSON.parse(row.redirect_uris);
  return {
    id: row.id,
    name: row.name,
    ownerId: row.owner_id,
    avatar: row.avatar,
    redirectUris: Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [],
    secretHash: row.secret_hash ?? undefined,
    created: row.created_at,
  };
}

export async function findClient(db: Db, id: string): Promise<OAuthClient | undefined> {
  const row = await findClientById(db, id);
  return row ? toClient(row) : undefined;
}

/**
 * The client `id` if `ownerId` owns it; another owner's is as unknown as an id that names nothing (the
 * applications page tells no one whether someone else's client exists).
 */
export async function findOwnedClient(db: Db, ownerId: number, id: string): Promise<OAuthClient | undefined> {
  const client = await findClient(db, id);
  return client?.ownerId === ownerId ? client : undefined;
}

export async function listClients(db: Db): Promise<OAuthClient[]> {
  return (await listClientRows(db)).map(toClient);
}

/** An owner's client with how many users have approved it. */
export interface OwnedClient extends OAuthClient {
  authorizedUsers: number;
}

/** The owner's clients, oldest first, each with how many users have approved it. */
export async function listClientsOfOwner(db: Db, ownerId: number): Promise<OwnedClient[]> {
  const clients = (await listClientRowsOfOwner(db, ownerId)).map(toClient);
  const counts = await consentCounts(
    db,
    clients.map((c) => c.id),
  );
  return clients.map((c) => ({ ...c, authorizedUsers: counts.get(c.id) ?? 0 }));
}

/**
 * How client names compare: one owner cannot have two whose keys are equal. As usernames compare (NFKC,
 * case folding, space and underscore alike: src/users/username.ts), hashed so that the key's length is
 * fixed; the unique index of migration 0016 holds it on every database.
 */
export const clientNameKey = (name: string): string => sha256Hex(usernameSafe(name));

/** Schemes a redirect URI may never use: they would run script or read local files in the browser. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);

/**
 * A URL an application registers (redirect URI, avatar) is written in printable ASCII with no spaces, as
 * RFC 3986 writes URIs (other characters percent-encoded, host names in their ASCII form): no control
 * character reaches a terminal that lists it, no look-alike reaches a page.
 */
const NOT_URI_TEXT = /[^\x21-\x7e]/;

/** Why a redirect URI cannot be registered (RFC 6749 §3.1.2: absolute, no fragment), or undefined. */
export function redirectUriProblem(uri: string): string | undefined {
  if (NOT_URI_TEXT.test(uri))
    return `${JSON.stringify(uri)} holds a space, a control or a non-ASCII character: percent-encode it`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${JSON.stringify(uri)} is not an absolute URI`;
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `the ${url.protocol} scheme is not allowed`;
  if (uri.includes('#')) return 'a redirect URI must not contain a fragment (#)';
  if (uri.length > 2000) return 'a redirect URI must be at most 2000 characters';
  return undefined;
}

/** Why an avatar URL cannot be used (empty, or an http(s) URL), or undefined. */
export function avatarProblem(avatar: string): string | undefined {
  if (avatar === '') return undefined;
  if (NOT_URI_TEXT.test(avatar))
    return 'the avatar URL holds a space, a control or a non-ASCII character: percent-encode it';
  try {
    const url = new URL(avatar);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'the avatar must be an http(s) URL';
  } catch {
    return `${JSON.stringify(avatar)} is not a URL`;
  }
  return avatar.length > 2048 ? 'the avatar URL must be at most 2048 characters' : undefined;
}

/** What the owner decides of a client, and may change later. */
export interface ClientFields {
  name: string;
  avatar: string;
  redirectUris: string[];
}

export interface NewClient extends ClientFields {
  ownerId: number;
  /** a public client (a browser or native app) gets no secret and must use PKCE */
  public: boolean;
  now: number;
  /** most clients the owner may have (OAUTH_CLIENTS_PER_USER_MAX, on the page); undefined: no bound (the CLI) */
  max?: number;
}

/** Which field a refusal is about. */
export type ClientField = 'name' | 'redirect_uris' | 'avatar';

export class ClientValidationError extends Error {
  readonly field: ClientField | undefined;
  constructor(message: string, field?: ClientField) {
    super(message);
    this.field = field;
  }
}

/** The owner already has `max` clients. */
export class ClientLimitReached extends Error {
  readonly max: number;
  constructor(max: number) {
    super(`You already have the most applications allowed (${max}). Delete one before registering another.`);
    this.max = max;
  }
}

/**
 * The fields as stored (name trimmed, each run of spaces made one space; each redirect URI once), or the
 * first refusal.
 */
function checkFields(input: ClientFields): ClientFields {
  // The rule of every name and description people read (src/shown-text.ts): nothing hidden, no piled marks.
  const unshowable = showableTextProblem(input.name);
  if (unshowable !== undefined) throw new ClientValidationError(`the name ${unshowable}`, 'name');
  const name = input.name.trim().replace(/\s+/gu, ' ');
  if (name === '' || name.length > 255)
    throw new ClientValidationError('the name must be 1–255 characters', 'name');
  if (blankToTheEye(name))
    throw new ClientValidationError(
      'the name must show something: spaces, accents alone or blank braille (U+2800) read as no name',
      'name',
    );
  if (input.redirectUris.length === 0)
    throw new ClientValidationError('at least one redirect URI is required', 'redirect_uris');
  if (input.redirectUris.length > 20)
    throw new ClientValidationError('at most 20 redirect URIs may be registered', 'redirect_uris');
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new ClientValidationError(`invalid redirect URI: ${problem}`, 'redirect_uris');
  }
  const avatarIssue = avatarProblem(input.avatar);
  if (avatarIssue) throw new ClientValidationError(avatarIssue, 'avatar');
  return { name, avatar: input.avatar, redirectUris: [...new Set(input.redirectUris)] };
}

/** The owner already has an application of that name (as names compare: `clientNameKey`). */
export class DuplicateClientName extends ClientValidationError {
  constructor(name: string) {
    super(
      `you already have an application named “${name}” (names compare ignoring case): choose another name`,
      'name',
    );
  }
}

/**
 * Registers a client; the secret (for a confidential client) is returned here once and stored hashed.
 * The owner's row is locked for the check of the name and the count, so two registrations at once
 * cannot both pass them.
 */
export async function createClient(
  db: Db,
  input: NewClient,
  act: Act,
): Promise<{ client: OAuthClient; secret: string | undefined }> {
  const fields = checkFields(input);
  const secret = input.public ? undefined : newOAuthSecret();
  const row: ClientRow = {
    id: newClientId(),
    name: fields.name,
    name_key: clientNameKey(fields.name),
    owner_id: input.ownerId,
    avatar: fields.avatar,
    redirect_uris: JSON.stringify(fields.redirectUris),
    secret_hash: secret === undefined ? null : sha256Hex(secret),
    created_at: input.now,
  };
  await db.transaction().execute(async (trx) => {
    await lockUser(trx, input.ownerId);
    if (await ownerHasClientNamed(trx, input.ownerId, row.name_key!, undefined))
      throw new DuplicateClientName(fields.name);
    if (input.max !== undefined && (await countClientsOfOwner(trx, input.ownerId)) >= input.max)
      throw new ClientLimitReached(input.max);
    await insertClient(trx, row);
    await recordEvent(trx, act, { userId: input.ownerId, kind: 'app.registered', clientId: row.id });
  });
  return { client: toClient(row), secret };
}

/** Changes the name, redirect URIs and avatar of the owner's client; false when the owner has no such client. */
export async function updateClient(
  db: Db,
  ownerId: number,
  id: string,
  input: ClientFields,
): Promise<boolean> {
  const fields = checkFields(input);
  if (!possibleClientId(id)) return false;
  const nameKey = clientNameKey(fields.name);
  return db.transaction().execute(async (trx) => {
    await lockUser(trx, ownerId);
    if (await ownerHasClientNamed(trx, ownerId, nameKey, id)) throw new DuplicateClientName(fields.name);
    return updateClientRow(trx, id, ownerId, {
      name: fields.name,
      name_key: nameKey,
      avatar: fields.avatar,
      redirect_uris: JSON.stringify(fields.redirectUris),
    });
  });
}

/**
 * A new secret for a confidential client, returned here once: the old one is refused from the moment this
 * commits, on every instance (each token request reads the client's row). With `endTokens`, every access
 * and refresh token and unexchanged code of the client ends with it; the users' approvals stay. Undefined
 * when there is no such confidential client.
 */
export async function rotateClientSecret(
  db: Db,
  client: OAuthClient,
  endTokens: boolean,
  act: Act,
): Promise<{ secret: string; ended: number } | undefined> {
  if (!isConfidential(client)) return undefined;
  const secret = newOAuthSecret();
  return withEvents(db, act, async (trx) => {
    if (!(await replaceClientSecretHash(trx, client.id, sha256Hex(secret)))) return undefined;
    const ended = endTokens ? await endGrantsOfApplication(trx, client.id, false) : 0;
    await recordEvent(trx, act, {
      userId: client.ownerId,
      kind: 'app.secret_rotated',
      clientId: client.id,
      detail: endTokens ? 'tokens ended' : null,
    });
    return { secret, ended };
  });
}

/**
 * Deletes the client and, in the same transaction, everything it holds or was granted: every access and
 * refresh token, code and approval, whether or not the database enforces its foreign keys' cascades (the
 * security log's `app.deleted` of its owner, published: every token it held ends).
 */
export async function deleteClient(db: Db, id: string, act: Act): Promise<boolean> {
  if (!possibleClientId(id)) return false;
  return withEvents(db, act, async (trx) => {
    const client = await findClientById(trx, id);
    if (!client) return false;
    await endGrantsOfApplication(trx, id, true);
    if (!(await deleteClientById(trx, id))) return false;
    await recordEvent(trx, act, { userId: client.owner_id, kind: 'app.deleted', clientId: id });
    return true;
  });
}

/**
 * The name of the application a sign-in's `next` page continues to, when that page is an authorization
 * request (`/oauth/authorize?client_id=…`) of a registered application; otherwise undefined.
 */
export async function applicationContinuedTo(db: Db, next: string): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(next, 'http://this.server');
  } catch {
    return undefined;
  }
  if (url.origin !== 'http://this.server' || url.pathname !== '/oauth/authorize') return undefined;
  const id = url.searchParams.get('client_id');
  if (id === null || !possibleClientId(id)) return undefined;
  return (await findClient(db, id))?.name;
}
