// The OpenID Connect parameters of an authorization request (OpenID Connect Core §3.1.2.1), and the one
// rule of how recent the user's sign-in must be:
// - `nonce`: kept with the code and put in its id_token (the client checks it);
// - `prompt`: `none` (no page: an answer to the client, login_required or consent_required when one would
//   be needed), `login` (sign in again even with a session), `consent` and `select_account` (the consent
//   page even for scopes approved before; it names who is signed in and offers to sign out);
// - `max_age`: the sign-in must be at most this many seconds old, else the user signs in again.
// `prompt=login` and `max_age` become one time, the earliest sign-in the request accepts. When the user is
// sent to sign in again, the request they come back with carries that time as `auth_after` (and no longer
// `prompt=login` or `max_age`, which a new sign-in has met): so the return does not ask again. The
// id_token's auth_time is always the session's real sign-in time, so a client that asked for
// `prompt=login` or `max_age` checks it (openid-client does so for max_age itself).
// `request`, `request_uri` and `registration` are refused with their OpenID Connect errors;
// `response_mode` may only be `query`.
import {
  InvalidRequest,
  RegistrationNotSupported,
  RequestNotSupported,
  RequestUriNotSupported,
} from '../errors.ts';
import type { Params } from '../params.ts';
import { storableText } from '../../store/text.ts';

export const PROMPT_VALUES = ['none', 'login', 'consent', 'select_account'] as const;
type Prompt = (typeof PROMPT_VALUES)[number];

/** Longest nonce kept (the column's length). */
export const NONCE_MAX_LENGTH = 255;

export interface OpenIdParameters {
  nonce: string | undefined;
  prompt: ReadonlySet<Prompt>;
  /** the earliest sign-in (Unix seconds) the request accepts; undefined: any */
  signedInAfter: number | undefined;
}

const isPrompt = (value: string): value is Prompt => (PROMPT_VALUES as readonly string[]).includes(value);

/** Reads the OpenID Connect parameters at `now`; a malformed one is invalid_request (sent back to the client). */
export function readOpenIdParameters(params: Params, now: number): OpenIdParameters {
  if (params.request !== undefined) throw new RequestNotSupported('Request objects are not supported.');
  if (params.request_uri !== undefined) throw new RequestUriNotSupported('request_uri is not supported.');
  if (params.registration !== undefined)
    throw new RegistrationNotSupported('The registration parameter is not supported.');
  if (params.response_mode !== undefined && params.response_mode !== 'query')
    throw new InvalidRequest('response_mode must be query, the only one supported.');
  const nonce = params.nonce;
  if (nonce !== undefined && (nonce.length > NONCE_MAX_LENGTH || !storableText(nonce)))
    throw new InvalidRequest(`nonce must be at most ${NONCE_MAX_LENGTH} characters, without NUL.`);

  const prompt = new Set<Prompt>();
  for (const value of (params.prompt ?? '').split(' ').filter(Boolean)) {
    if (!isPrompt(value))
      throw new InvalidRequest(
        `Unknown prompt value ${JSON.stringify(value)}; use ${PROMPT_VALUES.join(', ')}.`,
      );
    prompt.add(value);
  }
  if (prompt.has('none') && prompt.size > 1)
    throw new InvalidRequest('prompt=none cannot be combined with another prompt value.');

  const times: number[] = [];
  if (params.max_age !== undefined) {
    if (!/^\d{1,10}$/.test(params.max_age))
      throw new InvalidRequest('max_age must be a number of seconds (a non-negative integer).');
    times.push(now - Number(params.max_age));
  }
  if (params.auth_after !== undefined) {
    if (!/^\d{1,12}$/.test(params.auth_after)) throw new InvalidRequest('auth_after must be Unix seconds.');
    // A time to come cannot be met by signing in now: it counts as now.
    times.push(Math.min(Number(params.auth_after), now));
  }
  if (prompt.has('login')) times.push(now);
  return { nonce, prompt, signedInAfter: times.length > 0 ? Math.max(...times) : undefined };
}

/**
 * Whether a session signed in at `signedInAt` (null: a session from before tokend recorded it) meets the
 * request: signed in no earlier than it asks; and, for an `openid` request, with a known sign-in time (the
 * id_token's auth_time).
 */
export function signInMeets(
  signedInAt: number | null,
  oidc: Pick<OpenIdParameters, 'signedInAfter'>,
  openid: boolean,
): boolean {
  if (signedInAt === null) return oidc.signedInAfter === undefined && !openid;
  return oidc.signedInAfter === undefined || signedInAt >= oidc.signedInAfter;
}

/**
 * The request to come back to after a new sign-in: `prompt=login` and `max_age` replaced by `auth_after`,
 * the earliest sign-in they asked for (a sign-in that comes back with it has met them).
 */
export function afterSignIn(carried: Params, oidc: OpenIdParameters): Params {
  const out: Record<string, string | undefined> = { ...carried, max_age: undefined, auth_after: undefined };
  const prompt = [...oidc.prompt].filter((p) => p !== 'login');
  out.prompt = prompt.length > 0 ? prompt.join(' ') : undefined;
  if (oidc.signedInAfter !== undefined) out.auth_after = String(oidc.signedInAfter);
  return out;
}
