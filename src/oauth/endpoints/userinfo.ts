// GET and POST /oauth/userinfo (OpenID Connect Core §5.3): who an access token with the `openid` scope
// acts for, as the scopes granted say it (src/oauth/oidc.ts userClaims: sub; preferred_username with
// `profile`). The token comes as `Authorization: Bearer` (or, on POST, the form's access_token, RFC 6750
// §2.2), never in the query; it is found through the credential core, as an API request's is. Refusals are
// RFC 6750 §3's: 401 with `error="invalid_token"` for a token that is unknown, expired, revoked or whose
// user (or application's owner) is banned, 403 `insufficient_scope` for one without `openid`, and a bare
// `Bearer` challenge when no token came at all.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BEARER_REALM, bearerChallenge, type BearerChallenge } from '../../http/bearer-challenge.ts';
import { isBanned } from '../../auth/privileges.ts';
import type { OAuthDeps } from '../deps.ts';
import { grantsOpenId, userClaims } from '../oidc.ts';
import { noStore } from '../respond.ts';
import { singleValued } from '../params.ts';

/** The bearer token of the request: the Authorization header, or on a form POST its access_token. */
function presentedToken(request: FastifyRequest): string | undefined | 'malformed' {
  const header = request.headers.authorization;
  let fromBody: string | undefined;
  if (
    request.method === 'POST' &&
    /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '')
  ) {
    try {
      fromBody = singleValued(request.body).access_token;
    } catch {
      return 'malformed';
    }
  }
  if (header !== undefined) {
    const m = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
    // RFC 6750 §2: one method only.
    if (!m || fromBody !== undefined) return 'malformed';
    return m[1];
  }
  return fromBody;
}

function refuse(reply: FastifyReply, status: number, value: BearerChallenge) {
  return noStore(reply)
    .code(status)
    .header('WWW-Authenticate', bearerChallenge(value))
    .send({ error: value.error, error_description: value.description });
}

export function userinfoEndpoint(deps: OAuthDeps) {
  return async function userinfo(request: FastifyRequest, reply: FastifyReply) {
    const secret = presentedToken(request);
    if (secret === 'malformed')
      return noStore(reply)
        .code(400)
        .header('WWW-Authenticate', `Bearer realm="${BEARER_REALM}", error="invalid_request"`)
        .send({
          error: 'invalid_request',
          error_description: 'Send the access token once, as Authorization: Bearer <token>.',
        });
    if (secret === undefined)
      return noStore(reply).code(401).header('WWW-Authenticate', `Bearer realm="${BEARER_REALM}"`).send({
        error: 'invalid_request',
        error_description: 'Send an access token as Authorization: Bearer.',
      });
    const token = await deps.credentials.bearer(secret);
    if (!token)
      return refuse(reply, 401, {
        error: 'invalid_token',
        description: 'The access token is unknown, expired or revoked.',
      });
    if (token.kind !== 'bearer' || !grantsOpenId(token.scope))
      return refuse(reply, 403, {
        error: 'insufficient_scope',
        scope: 'openid',
        description: 'userinfo needs an access token granted the openid scope.',
      });
    if (isBanned(token.userPrivileges) || token.ownerBanned)
      return refuse(reply, 401, {
        error: 'invalid_token',
        description: 'The account this token acts for, or its application, is suspended.',
      });
    return noStore(reply).send(userClaims({ id: token.userId, username: token.username }, token.scope));
  };
}
