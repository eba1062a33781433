// Client authentication at the token, revocation and introspection endpoints (RFC 6749 §2.3.1):
// HTTP Basic or client_secret_post for confidential clients, client_id alone for public ones.
import type { FastifyRequest } from 'fastify';
import type { Db } from '../store/database.ts';
import { findClient, isConfidential, type OAuthClient } from './clients.ts';
import { InvalidClient, InvalidRequest } from './errors.ts';
import type { Params } from './params.ts';
import { sameDigest, sha256Hex } from './secrets.ts';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

interface PresentedCredentials {
  clientId: string;
  secret: string | undefined;
  method: ClientAuthMethod;
}

/** application/x-www-form-urlencoded decoding, which RFC 6749 §2.3.1 applies inside the Basic header. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidClient('Malformed HTTP Basic credentials.');
  }
}

function readBasic(header: string): { clientId: string; secret: string } {
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new InvalidClient('Malformed HTTP Basic credentials.');
  return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

function presentedCredentials(request: FastifyRequest, params: Params): PresentedCredentials {
  const authorization = request.headers.authorization;
  if (authorization !== undefined && /^basic /i.test(authorization)) {
    if (params.client_secret !== undefined)
      throw new InvalidRequest('Use one client authentication method, not both Basic and client_secret.');
    const basic = readBasic(authorization);
    if (params.client_id !== undefined && params.client_id !== basic.clientId)
      throw new InvalidRequest('client_id does not match the HTTP Basic credentials.');
    return { ...basic, method: 'client_secret_basic' };
  }
  if (params.client_id === undefined)
    throw new InvalidClient('Client authentication is required: send client_id (and its secret).');
  if (params.client_secret !== undefined)
    return { clientId: params.client_id, secret: params.client_secret, method: 'client_secret_post' };
  return { clientId: params.client_id, secret: undefined, method: 'none' };
}

export interface AuthenticatedClient {
  client: OAuthClient;
  method: ClientAuthMethod;
}

/** The client the request comes from; a confidential client must prove it with its secret. */
export async function authenticateClient(
  db: Db,
  request: FastifyRequest,
  params: Params,
): Promise<AuthenticatedClient> {
  const presented = presentedCredentials(request, params);
  const client = await findClient(db, presented.clientId);
  if (!client) throw new InvalidClient('Unknown client.');
  if (isConfidential(client)) {
    if (presented.secret === undefined)
      throw new InvalidClient('This client is confidential: authenticate with its secret.');
    if (!sameDigest(sha256Hex(presented.secret), client.secretHash ?? ''))
      throw new InvalidClient('Client authentication failed.');
  } else if (presented.secret !== undefined) {
    throw new InvalidClient('This is a public client: it has no secret to send.');
  }
  return { client, method: presented.method };
}
