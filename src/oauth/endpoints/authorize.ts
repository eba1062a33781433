// GET and POST /oauth/authorize (RFC 6749 §4.1.1–4.1.2, RFC 7636, RFC 9207): find the client and its
// exact redirect URI (a failure here is shown as a page, never redirected), read the rest of the request
// (a failure is redirected back with error=), find the signed-in user, then ask for consent or answer.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isBanned } from '../../auth/privileges.ts';
import { findUserById } from '../../users/repository.ts';
import { consentPage, sendConsentPage } from './consent-page.ts';
import {
  confirmSudo,
  csrfToken,
  sessionUser,
  sudoRefusalStatus,
  webAct,
  type Session,
} from '../../web/session.ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { APPLICATION_SUSPENDED, findClient, type OAuthClient } from '../clients.ts';
import type { ConsentPageDeps } from '../deps.ts';
import {
  AccessDenied,
  InvalidRequest,
  OAuthError,
  ServerError,
  UnsupportedResponseType,
  errorBody,
} from '../errors.ts';
import { CODE_TTL_S, endCodesBeyond } from '../issue.ts';
import { required, singleParam, singleValued, type Params } from '../params.ts';
import { findConsentScope, insertCode, ownerIsBanned, saveConsent } from '../repository.ts';
import { SCOPES, formatScope, parseScope, scopeCovers } from '../scopes.ts';
import { newOAuthSecret, sha256Hex } from '../secrets.ts';
import { issuerOf } from './metadata.ts';

/** Where answers go: known once the client and redirect URI are verified. */
interface ReplyTarget {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  issuer: string;
}

interface AuthorizationRequest extends ReplyTarget {
  scopes: string[];
  codeChallenge: string;
}

/** The parameters the consent form carries to its POST. */
const REQUEST_FIELDS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
] as const;

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Step 1: the client, and a redirect URI registered for it exactly (RFC 6749 §3.1.2.3, §4.1.2.1). */
async function findReplyTarget(
  deps: ConsentPageDeps,
  request: FastifyRequest,
  source: unknown,
): Promise<ReplyTarget> {
  const clientId = singleParam(source, 'client_id');
  if (clientId === undefined) throw new InvalidRequest('The client_id parameter is missing.');
  const client = await findClient(deps.db, clientId);
  if (!client) throw new InvalidRequest('No application with this client_id is registered.');
  if (await ownerIsBanned(deps.db, client.ownerId)) throw new InvalidRequest(APPLICATION_SUSPENDED);
  const redirectUri = singleParam(source, 'redirect_uri');
  if (redirectUri === undefined) throw new InvalidRequest('The redirect_uri parameter is missing.');
  if (!client.redirectUris.includes(redirectUri))
    throw new InvalidRequest(`This redirect_uri is not registered for ${client.name}.`);
  let state: string | undefined;
  try {
    state = singleParam(source, 'state');
  } catch {
    state = undefined; // a repeated state is refused in step 2, without echoing either value
  }
  return { client, redirectUri, state, issuer: issuerOf(request, deps.publicUrl) };
}

/** Step 2: response type, scope and PKCE (S256 only; `plain` and a missing challenge are refused). */
function readAuthorizationRequest(target: ReplyTarget, params: Params): AuthorizationRequest {
  const responseType = required(params, 'response_type');
  if (responseType !== 'code')
    throw new UnsupportedResponseType('Only response_type=code (the authorization code flow) is supported.');
  const scopes = parseScope(params.scope);
  const challenge = params.code_challenge;
  const method = params.code_challenge_method;
  if (challenge === undefined) throw new InvalidRequest('PKCE is required: send code_challenge (S256).');
  if (method === undefined || method === 'plain')
    throw new InvalidRequest('code_challenge_method must be S256; the plain method is not accepted.');
  if (method !== 'S256') throw new InvalidRequest(`Unknown code_challenge_method ${JSON.stringify(method)}.`);
  if (!S256_CHALLENGE.test(challenge))
    throw new InvalidRequest('code_challenge must be the 43-character base64url SHA-256 of the verifier.');
  return { ...target, scopes, codeChallenge: challenge };
}

function redirectBack(
  reply: FastifyReply,
  target: ReplyTarget,
  answer: Record<string, string>,
  status: number,
) {
  const url = new URL(target.redirectUri);
  for (const [name, value] of Object.entries(answer)) url.searchParams.append(name, value);
  if (target.state !== undefined) url.searchParams.append('state', target.state);
  url.searchParams.append('iss', target.issuer);
  return reply.header('Cache-Control', 'no-store').redirect(url.toString(), status);
}

function redirectError(
  request: FastifyRequest,
  reply: FastifyReply,
  target: ReplyTarget,
  err: unknown,
  status: number,
) {
  const oauthError = err instanceof OAuthError ? err : new ServerError('internal error');
  if (!(err instanceof OAuthError)) request.log.error({ err }, 'authorization request failed');
  return redirectBack(reply, target, { ...errorBody(oauthError) }, status);
}

async function redirectWithCode(
  deps: ConsentPageDeps,
  reply: FastifyReply,
  authz: AuthorizationRequest,
  user: Session,
  status: number,
  now: number,
) {
  const code = newOAuthSecret();
  const row = {
    code_hash: sha256Hex(code),
    client_id: authz.client.id,
    user_id: user.userId,
    redirect_uri: authz.redirectUri,
    scope: formatScope(authz.scopes),
    code_challenge: authz.codeChallenge,
    expires_at: now + CODE_TTL_S,
    used: 0,
    created_at: now,
  };
  await insertCode(deps.db, row);
  await endCodesBeyond(deps.db, row, deps.grants);
  return redirectBack(reply, authz, { code }, status);
}

function toLogin(reply: FastifyReply, params: Params) {
  const query = new URLSearchParams();
  for (const name of REQUEST_FIELDS) if (params[name] !== undefined) query.append(name, params[name]);
  return reply.redirect(`/login?next=${encodeURIComponent(`/oauth/authorize?${query}`)}`, 303);
}

async function alreadyApproved(
  deps: ConsentPageDeps,
  user: Session,
  authz: AuthorizationRequest,
): Promise<boolean> {
  const approved = await findConsentScope(deps.db, user.userId, authz.client.id);
  return approved !== undefined && scopeCovers(approved.split(' ').filter(Boolean), authz.scopes);
}

async function showConsent(
  deps: ConsentPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  authz: AuthorizationRequest,
  user: Session,
  params: Params,
  now: number,
  status = 200,
  error?: string,
) {
  const owner = await findUserById(deps.db, authz.client.ownerId);
  const carried = Object.fromEntries(REQUEST_FIELDS.map((name) => [name, params[name]]));
  return sendConsentPage(
    reply,
    status,
    `Authorize ${authz.client.name}`,
    consentPage({
      csrf: csrfToken(request, reply),
      username: user.username,
      client: {
        name: authz.client.name,
        avatar: authz.client.avatar,
        ownerName: owner?.username ?? 'an unknown user',
      },
      scopes: authz.scopes.map((name) => ({ name, description: SCOPES[name]?.description ?? name })),
      request: carried,
      needsPassword: !inSudoMode(user, now, deps.web.sudoWindowS),
      ...(error === undefined ? {} : { error }),
    }),
  );
}

/** GET: the consent page, or straight back to the client when this user already approved these scopes. */
export function authorizeGetEndpoint(deps: ConsentPageDeps) {
  return async function authorize(request: FastifyRequest, reply: FastifyReply) {
    const target = await findReplyTarget(deps, request, request.query);
    try {
      const params = singleValued(request.query);
      const authz = readAuthorizationRequest(target, params);
      const user = await sessionUser(deps.web, request);
      if (!user) return toLogin(reply, params);
      if (isBanned(user.userPrivileges)) throw new AccessDenied('This account is banned.');
      const now = deps.now();
      if (await alreadyApproved(deps, user, authz))
        return await redirectWithCode(deps, reply, authz, user, 302, now);
      return await showConsent(deps, request, reply, authz, user, params, now);
    } catch (err) {
      return redirectError(request, reply, target, err, 302);
    }
  };
}

/** POST: the Allow/Deny form (CSRF-checked before this runs). */
export function authorizePostEndpoint(deps: ConsentPageDeps) {
  return async function decide(request: FastifyRequest, reply: FastifyReply) {
    const target = await findReplyTarget(deps, request, request.body);
    try {
      const params = singleValued(request.body);
      const authz = readAuthorizationRequest(target, params);
      const user = await sessionUser(deps.web, request);
      if (!user) return toLogin(reply, params);
      if (isBanned(user.userPrivileges)) throw new AccessDenied('This account is banned.');
      const decision = params.decision;
      if (decision === 'deny') throw new AccessDenied('The user denied the request.');
      if (decision !== 'allow') throw new InvalidRequest('decision must be allow or deny.');
      // Sudo mode: approving needs a recent password entry. One reading of the clock judges it, in the
      // check and on the page that asks for the password again.
      const now = deps.now();
      const act = webAct(deps.web, request, user, now);
      const sudo = await confirmSudo(deps.web, user, params.confirm_password, act);
      if (sudo.kind === 'signed-out') return toLogin(reply, params);
      if (sudo.kind === 'password-needed') {
        const status = sudoRefusalStatus(reply, sudo);
        const error = sudo.error ?? 'Enter your password to approve this application.';
        return await showConsent(deps, request, reply, authz, user, params, now, status, error);
      }
      const earlier = (await findConsentScope(deps.db, user.userId, authz.client.id)) ?? '';
      const approved = new Set([...earlier.split(' ').filter(Boolean), ...authz.scopes]);
      await saveConsent(
        deps.db,
        {
          userId: user.userId,
          clientId: authz.client.id,
          scope: formatScope([...approved]),
        },
        act,
      );
      return await redirectWithCode(deps, reply, authz, user, 303, now);
    } catch (err) {
      return redirectError(request, reply, target, err, 303);
    }
  };
}
