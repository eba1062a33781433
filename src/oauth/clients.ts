// Registered clients: creation (CLI), listing, deletion, and the domain view used by the endpoints.
import type { Db } from '../store/database.ts';
import {
  deleteClientById,
  findClientById,
  insertClient,
  listClientRows,
  type ClientRow,
} from './repository.ts';
import { newClientId, newOAuthSecret, sha256Hex } from './secrets.ts';
import { recordEvent, type Act } from '../auth/security-log.ts';

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
    created: Number(row.created_at),
  };
}

export async function findClient(db: Db, id: string): Promise<OAuthClient | undefined> {
  const row = await findClientById(db, id);
  return row ? toClient(row) : undefined;
}

export async function listClients(db: Db): Promise<OAuthClient[]> {
  return (await listClientRows(db)).map(toClient);
}

/**
 * Deletes a client with its codes, tokens and consents (the security log's `app.deleted` of its owner,
 * published: every token it held ends).
 */
export async function deleteClient(db: Db, id: string, act: Act): Promise<boolean> {
  const client = await findClient(db, id);
  if (!client || !(await deleteClientById(db, id))) return false;
  await recordEvent(db, act, { userId: client.ownerId, kind: 'app.deleted', clientId: id });
  return true;
}

/** Schemes a redirect URI may never use: they would run script or read local files in the browser. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);

/** Why a redirect URI cannot be registered (RFC 6749 §3.1.2: absolute, no fragment), or undefined. */
export function redirectUriProblem(uri: string): string | undefined {
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
  try {
    const url = new URL(avatar);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'the avatar must be an http(s) URL';
  } catch {
    return `${JSON.stringify(avatar)} is not a URL`;
  }
  return avatar.length > 2048 ? 'the avatar URL must be at most 2048 characters' : undefined;
}

export interface NewClient {
  name: string;
  ownerId: number;
  avatar: string;
  redirectUris: string[];
  /** a public client (a browser or native app) gets no secret and must use PKCE */
  public: boolean;
  now: number;
}

export class ClientValidationError extends Error {}

/** Registers a client; the secret (for a confidential client) is returned here once and stored hashed. */
export async function createClient(
  db: Db,
  input: NewClient,
): Promise<{ client: OAuthClient; secret: string | undefined }> {
  const name = input.name.trim();
  if (name === '' || name.length > 255) throw new ClientValidationError('the name must be 1–255 characters');
  if (input.redirectUris.length === 0)
    throw new ClientValidationError('at least one redirect URI is required');
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new ClientValidationError(`invalid redirect URI: ${problem}`);
  }
  const avatarIssue = avatarProblem(input.avatar);
  if (avatarIssue) throw new ClientValidationError(avatarIssue);

  const secret = input.public ? undefined : newOAuthSecret();
  const row: ClientRow = {
    id: newClientId(),
    name,
    owner_id: input.ownerId,
    avatar: input.avatar,
    redirect_uris: JSON.stringify([...new Set(input.redirectUris)]),
    secret_hash: secret === undefined ? null : sha256Hex(secret),
    created_at: input.now,
  };
  await insertClient(db, row);
  return { client: toClient(row), secret };
}
