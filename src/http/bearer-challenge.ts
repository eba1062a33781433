// RFC 6750 §3: what the API tells a client about the bearer token it presented, in WWW-Authenticate, so that
// an OAuth client library knows what to do (refresh or ask the user again: invalid_token; ask for more:
// insufficient_scope). The spec's status codes and envelopes stay as they are; only the header is added:
// - a presented bearer value that matches nothing (unknown, expired, revoked): invalid_token, on whatever
//   the route answers (the identity plugin, src/http/plugin.ts, sets it before the handler runs);
// - an access token refused for what it may do (a scope it lacks, an operation no scope allows, a token of
//   no user where a user is needed): the route's 401 through `refuseAccessToken`, insufficient_scope, with
//   `scope` naming the scope that would do;
// - an access token whose owner is banned: invalid_token (introspection calls it inactive too).
// API tokens and sessions never get the header: their clients are not OAuth clients.
import type { FastifyReply } from 'fastify';
import type { Identity } from '../auth/identity.ts';
import { sendEnvelope } from './envelope.ts';

export const BEARER_REALM = 'tokend';

export type BearerError = 'invalid_token' | 'insufficient_scope';

export interface BearerChallenge {
  error: BearerError;
  /** RFC 6750 §3: the scope the request needs, when one would do */
  scope?: string;
  description: string;
}

/** A header parameter's value: RFC 6750 §3 allows no `"` or `\` in it. */
const quoted = (value: string): string => `"${value.replace(/["\\]/g, "'")}"`;

/** The WWW-Authenticate value of a challenge. */
export function bearerChallenge({ error, scope, description }: BearerChallenge): string {
  const parameters = [`realm=${quoted(BEARER_REALM)}`, `error=${quoted(error)}`];
  if (scope !== undefined) parameters.push(`scope=${quoted(scope)}`);
  parameters.push(`error_description=${quoted(description)}`);
  return `Bearer ${parameters.join(', ')}`;
}

export const UNKNOWN_BEARER: BearerChallenge = {
  error: 'invalid_token',
  description: 'The access token is unknown, expired or revoked.',
};

/** Sets the challenge on the answer, whatever its status. */
export const challenge = (reply: FastifyReply, value: BearerChallenge): FastifyReply =>
  reply.header('WWW-Authenticate', bearerChallenge(value));

/** Whether the identity came from an OAuth access token (for a user, or an application's own). */
export const isAccessToken = (identity: Identity): boolean =>
  identity.kind === 'bearer' || identity.kind === 'client';

/**
 * The 401 envelope of a request its credential may not make. For an OAuth access token the answer also
 * says why in WWW-Authenticate: insufficient_scope (naming `scope` when one would do), or invalid_token for
 * a banned owner's token (`ownerBanned`).
 */
export function refuseAccessToken(
  reply: FastifyReply,
  identity: Identity,
  message: string,
  options: { scope?: string; ownerBanned?: boolean } = {},
): FastifyReply {
  if (isAccessToken(identity))
    challenge(reply, {
      error: options.ownerBanned ? 'invalid_token' : 'insufficient_scope',
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      description: message,
    });
  return sendEnvelope(reply, 401, message);
}

/**
 * The 401 of an application's own token (the client credentials grant) where a user is needed: it acts
 * for no user, so no scope would do. `doing` completes "it cannot …".
 */
export const refuseApplicationToken = (reply: FastifyReply, identity: Identity, doing: string) =>
  refuseAccessToken(
    reply,
    identity,
    `This token is an application's own (client credentials grant) and acts for no user: it cannot ${doing}.`,
  );
