// GET and POST /oauth/authorize (RFC 6749 §4.1.1–4.1.2, RFC 7636, RFC 9207, OpenID Connect Core §3.1.2):
// find the client and its exact redirect URI (a failure here is shown as a page, never redirected), read
// the rest of the request (a failure is redirected back with error=), find the signed-in user and whether
// the sign-in is recent enough (prompt=login, max_age: authorize-request.ts), then ask for consent or
// answer. With prompt=none nothing is shown: what would need a page is an error sent back.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isBanned } from '../../auth/privileges.ts';
import { findUserById } from '../../users/repository.ts';
import { consentPage, sendConsentPage } from '../pages/consent-page.ts';
import { csrfToken, sessionUser, webAct, type Session } from '../../web/session.ts';
import { sudoOrRefuse } from '../../web/hooks.ts';
import { inSudoMode } from '../../auth/sessions.ts';
import { APPLICATION_SUSPENDED, findClient, type OAuthClient } from '../clients.ts';
import type { ConsentPageDeps } from '../deps.ts';
import {
  AccessDenied,
  ConsentRequired,
  InvalidRequest,
  LoginRequired,
  OAuthError,
  ServerError,
  UnsupportedResponseType,
  errorBody,
} from '../errors.ts';
import {
  afterSignIn,
  readOpenIdParameters,
  signInMeets,
  type OpenIdParameters,
} from './authorize-request.ts';
import { CODE_TTL_S, endCodesBeyond } from '../issue.ts';
import { required, singleParam, singleValued, type Params } from '../params.ts';
import { findConsentScope, insertCode, ownerIsBanned, saveConsent } from '../repository.ts';
import { SCOPES, formatScope, parseScope, scopeCovers } from '../scopes.ts';
import { redirectUriMatches } from '../redirect-match.ts';
import { hintedSubject } from '../oidc.ts';
import { scopeNames } from '../../auth/scope.ts';
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
  oidc: OpenIdParameters;
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
  'nonce',
  'prompt',
  'max_age',
  'auth_after',
] as const;

const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Step 1: the client, and a redirect URI registered for it (RFC 6749 §3.1.2.3, §4.1.2.1; loopback: redirect-match.ts). */
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
  if (!redirectUriMatches(client.redirectUris, redirectUri))
    throw new InvalidRequest(`This redirect_uri is not registered for ${client.name}.`);
  let state: string | undefined;
  try {
    state = singleParam(source, 'state');
  } catch {
    state = undefined; // a repeated state is refused in step 2, without echoing either value
  }
  return { client, redirectUri, state, issuer: issuerOf(request, deps.publicUrl) };
}

/**
 * Step 2: response type, scope, PKCE (S256 only; `plain` and a missing challenge are refused) and the
 * OpenID Connect parameters, at `now`. OpenID Connect's scopes tokend has no data for are left out.
 */
function readAuthorizationRequest(target: ReplyTarget, params: Params, now: number): AuthorizationRequest {
  const responseType = required(params, 'response_type');
  if (responseType !== 'code')
    throw new UnsupportedResponseType('Only response_type=code (the authorization code flow) is supported.');
  const scopes = parseScope(params.scope, { grantable: true });
  const oidc = readOpenIdParameters(params, now);
  const challenge = params.code_challenge;
  const method = params.code_challenge_method;
  if (challenge === undefined) throw new InvalidRequest('PKCE is required: send code_challenge (S256).');
  if (method === undefined || method === 'plain')
    throw new InvalidRequest('code_challenge_method must be S256; the plain method is not accepted.');
  if (method !== 'S256') throw new InvalidRequest(`Unknown code_challenge_method ${JSON.stringify(method)}.`);
  if (!S256_CHALLENGE.test(challenge))
    throw new InvalidRequest('code_challenge must be the 43-character base64url SHA-256 of the verifier.');
  return { ...target, scopes, codeChallenge: challenge, oidc };
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
    nonce: authz.oidc.nonce ?? null,
    auth_time: user.signedInAt,
  };
  await insertCode(deps.db, row);
  await endCodesBeyond(deps.db, row, deps.grants);
  return redirectBack(reply, authz, { code }, status);
}

/**
 * To the sign-in page and back to this request (prompt=login and max_age as auth_after: they are met by
 * the sign-in); `again`: the browser has a session, whose sign-in is too old, and signs in anew.
 */
function toLogin(reply: FastifyReply, params: Params, oidc: OpenIdParameters | undefined, again = false) {
  const carried = oidc ? afterSignIn(params, oidc) : params;
  const query = new URLSearchParams();
  for (const name of REQUEST_FIELDS) if (carried[name] !== undefined) query.append(name, carried[name]);
  const next = encodeURIComponent(`/oauth/authorize?${query}`);
  return reply.redirect(`/login?next=${next}${again ? '&again=1' : ''}`, 303);
}

/**
 * Whether the session may go on to consent: its sign-in recent enough for the request. Otherwise the
 * answer (prompt=none: login_required to the client; else the sign-in page) is what to send.
 */
function signInChecked(
  reply: FastifyReply,
  authz: AuthorizationRequest,
  user: Session,
  params: Params,
): FastifyReply | undefined {
  if (signInMeets(user.signedInAt, authz.oidc, authz.scopes.includes('openid'))) return undefined;
  if (authz.oidc.prompt.has('none'))
    throw new LoginRequired(
      'The user must sign in again (prompt=login or max_age), and prompt=none was asked.',
    );
  return toLogin(reply, params, authz.oidc, true);
}

async function alreadyApproved(
  deps: ConsentPageDeps,
  user: Session,
  authz: AuthorizationRequest,
): Promise<boolean> {
  const approved = await findConsentScope(deps.db, user.userId, authz.client.id);
  return approved !== undefined && scopeCovers(scopeNames(approved), authz.scopes);
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
  // The consent form carries the request as this page met it: a new sign-in's auth_after, not max_age.
  const met = afterSignIn(params, authz.oidc);
  const carried = Object.fromEntries(REQUEST_FIELDS.map((name) => [name, met[name]]));
  return sendConsentPage(
    reply,
    status,
    `Authorize ${authz.client.name}`,
    consentPage({
      csrf: csrfToken(request, reply),
      username: user.username,
      serverName: reply.serverName,
      client: {
        name: authz.client.name,
        avatar: authz.client.avatar,
        ownerName: owner?.username ?? 'an unknown user',
      },
      scopes: authz.scopes.map((name) => ({ name, description: SCOPES[name]?.description })),
      request: carried,
      needsPassword: !inSudoMode(user, now, deps.web.sudoWindowS),
      ...(error === undefined ? {} : { error }),
    }),
  );
}

const NOT_APPROVED_SILENTLY = 'The user has not approved these scopes, and prompt=none was asked.';

/**
 * GET: the consent page, or straight back to the client when this user already approved these scopes
 * (unless prompt=consent or select_account asks for the page).
 */
export function authorizeGetEndpoint(deps: ConsentPageDeps) {
  return async function authorize(request: FastifyRequest, reply: FastifyReply) {
    const target = await findReplyTarget(deps, request, request.query);
    try {
      const now = request.now;
      const params = singleValued(request.query);
      const authz = readAuthorizationRequest(target, params, now);
      const silent = authz.oidc.prompt.has('none');
      const user = await sessionUser(deps.web, request);
      if (!user) {
        if (silent) throw new LoginRequired('The user is not signed in, and prompt=none was asked.');
        return toLogin(reply, params, authz.oidc);
      }
      if (isBanned(user.userPrivileges)) {
        // Asked silently, the answer is the one of any approval not given: an application that the
        // user did not send here learns nothing of their account beyond that someone is signed in.
        if (silent) throw new ConsentRequired(NOT_APPROVED_SILENTLY);
        throw new AccessDenied('This account is banned.');
      }
      const signIn = signInChecked(reply, authz, user, params);
      if (signIn) return signIn;
      // id_token_hint: the user the application expects. Another one signed in must sign in again (or,
      // asked silently, the answer is login_required), never be answered for as the hinted user.
      const hint = params.id_token_hint;
      if (hint !== undefined) {
        const sub = await hintedSubject(deps.keys, hint, {
          issuer: target.issuer,
          clientId: authz.client.id,
        });
        if (sub === undefined)
          throw new InvalidRequest(
            'id_token_hint is not an id_token this server issued to this application.',
          );
        if (sub !== String(user.userId)) {
          if (silent) throw new LoginRequired('The signed-in user is not the one id_token_hint names.');
          return toLogin(reply, params, authz.oidc, true);
        }
      }
      const askAnyway = authz.oidc.prompt.has('consent') || authz.oidc.prompt.has('select_account');
      if (!askAnyway && (await alreadyApproved(deps, user, authz)))
        return await redirectWithCode(deps, reply, authz, user, 302, now);
      if (silent) throw new ConsentRequired(NOT_APPROVED_SILENTLY);
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
      // One reading of the clock judges the sign-in, sudo mode, and the page that asks for the password.
      const now = request.now;
      const params = singleValued(request.body);
      const authz = readAuthorizationRequest(target, params, now);
      const user = await sessionUser(deps.web, request);
      if (!user) return toLogin(reply, params, authz.oidc);
      if (isBanned(user.userPrivileges)) throw new AccessDenied('This account is banned.');
      const signIn = signInChecked(reply, authz, user, params);
      if (signIn) return signIn;
      const decision = params.decision;
      if (decision === 'deny') throw new AccessDenied('The user denied the request.');
      if (decision !== 'allow') throw new InvalidRequest('decision must be allow or deny.');
      // Sudo mode: approving needs a recent password entry.
      const act = webAct(deps.web, request, user, now);
      const allowed = await sudoOrRefuse(
        request,
        reply,
        params.confirm_password,
        {
          home: '/tokens',
          signedOut: (_request, reply) => toLogin(reply, params, authz.oidc),
          refuse: (request, reply, refusal) =>
            showConsent(
              deps,
              request,
              reply,
              authz,
              user,
              params,
              now,
              refusal.status,
              refusal.error ?? 'Enter your password to approve this application.',
            ),
        },
        user,
      );
      if (!allowed) return reply;
      const earlier = (await findConsentScope(deps.db, user.userId, authz.client.id)) ?? '';
      const approved = new Set([...scopeNames(earlier), ...authz.scopes]);
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
