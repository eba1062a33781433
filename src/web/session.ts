// The browser's side of a web session (src/auth/sessions.ts decides what a session is): the `rt` cookie,
// reading the signed-in user from it, and sudo mode's password confirmation.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { COOKIE_NAME, readSessionCookie } from '../http/credentials.ts';
import type { Clock } from '../auth/clock.ts';
import type { CredentialCore } from '../auth/credentials.ts';
import { checkPasswordLogin, type PasswordLoginDeps } from '../users/password-login.ts';
import { inSudoMode, recordPasswordEntry, type Session } from '../auth/sessions.ts';
import { isBanned } from '../auth/privileges.ts';
import type { Db } from '../store/database.ts';
import { html, type Html } from './html.ts';
import { requestAct } from '../http/client-address.ts';
import type { Act, EventSink } from '../auth/security-log.ts';

export type { Session } from '../auth/sessions.ts';

export interface WebDeps extends PasswordLoginDeps {
  db: Db;
  /** finds the session a cookie holds */
  credentials: Pick<CredentialCore, 'session'>;
  /** SUDO_WINDOW_S */
  sudoWindowS: number;
  /** the app's clock (Services.clock): sign-in times and sudo mode read it */
  clock: Clock;
  /** where the security log publishes revocations (Services.events) */
  events: EventSink;
}

/**
 * The security log's act of a page's request: means web, by the signed-in session (none: a sign-in), at
 * `at` (default: the request's one reading of the clock, `request.now`).
 */
export function webAct(
  deps: Pick<WebDeps, 'events'>,
  request: FastifyRequest,
  session: Pick<Session, 'id' | 'userId'> | undefined,
  at: number = request.now,
): Act {
  return requestAct(request, 'web', session?.id ?? null, at, deps.events, session?.userId ?? null);
}

/**
 * The signed-in user of this browser: the live web session in the `rt` cookie, or undefined. Any other
 * credential in the cookie (an API token, a bearer token, an ended or expired session) signs no one in.
 */
export function sessionUser(deps: WebDeps, request: FastifyRequest): Promise<Session | undefined> {
  return deps.credentials.session(readSessionCookie(request));
}

/**
 * The signed-in user a page of `home`'s family needs, not banned. Otherwise undefined, the answer sent: a
 * browser that is not signed in goes to sign in and then back to this page (after a form, to `home`);
 * a banned user gets the page `banned` sends.
 */
export async function pageUser(
  deps: WebDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  home: string,
  banned: (reply: FastifyReply) => unknown,
): Promise<Session | undefined> {
  const user = await sessionUser(deps, request);
  if (!user) {
    const next = request.method === 'GET' ? request.url : home;
    reply.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
    return undefined;
  }
  if (isBanned(user.userPrivileges)) {
    banned(reply);
    return undefined;
  }
  return user;
}

/**
 * The password field of a form that needs sudo mode (the password entered within the last minutes);
 * `autofocus` when the form came back because of it. With `error`, the message sits next to the field
 * (as `errorId`), which it describes, and the field has the focus.
 */
export function confirmPasswordField(
  options: { autofocus?: boolean; error?: string | undefined; errorId?: string } = {},
): Html {
  const errorId = options.errorId ?? 'confirm-password-error';
  const state =
    options.error !== undefined
      ? html`autofocus aria-invalid="true" aria-describedby="${errorId} confirm-password-about"`
      : options.autofocus
        ? html`autofocus aria-invalid="true" aria-describedby="confirm-password-about"`
        : html`aria-describedby="confirm-password-about"`;
  return html`<p>
    <label for="confirm_password">Confirm with your password</label>
    ${
      options.error !== undefined
        ? html`<span class="error field-error" role="alert" id="${errorId}">${options.error}</span>`
        : ''
    }
    <input
      type="password"
      id="confirm_password"
      name="confirm_password"
      required
      autocomplete="current-password"
      ${state}
    />
    <span class="muted" id="confirm-password-about"
      >You signed in a while ago: enter your password again to go on.</span
    >
  </p>`;
}

/**
 * What a user whose password is of the old, legacy kind (which tokend cannot check) is told, on sign-in and
 * in sudo mode: tokend has no reset page, so the server's operator sets a new password.
 */
export const LEGACY_PASSWORD_HELP =
  "This account still has an old-style password, which this server cannot check. Ask the server's " +
  'operator to set a new password for it (they run “tokend user passwd”), then sign in with the new one.';

export type SudoCheck =
  | { kind: 'ok' }
  /** the password is needed (again); `error` says why the one given was not taken */
  | { kind: 'password-needed'; error?: string; retryAfterS?: number }
  | { kind: 'signed-out' };

/**
 * The status of a form refused for sudo mode: 429 with Retry-After when the login limits (or a full
 * password queue) said to wait, else 403.
 */
export function sudoRefusalStatus(
  reply: FastifyReply,
  refusal: Extract<SudoCheck, { kind: 'password-needed' }>,
): number {
  if (refusal.retryAfterS === undefined) return 403;
  reply.header('Retry-After', String(refusal.retryAfterS));
  return 429;
}

/**
 * Sudo mode: a sensitive action goes ahead when the session's password was entered within
 * SUDO_WINDOW_S of `now` (the request's one reading of the clock, which its page judges sudo mode by
 * too), or when `password` is given now and passes the same check (and rate limits) as a sign-in.
 */
export async function confirmSudo(
  deps: WebDeps,
  session: Session,
  password: string | undefined,
  /** the request (webAct), at the time its page judges sudo mode by */
  act: Act,
): Promise<SudoCheck> {
  if (inSudoMode(session, act.at, deps.sudoWindowS)) return { kind: 'ok' };
  if (password === undefined || password === '') return { kind: 'password-needed' };
  if (password.length > 1024) return { kind: 'password-needed', error: 'That password is too long.' };
  const checked = await checkPasswordLogin(deps, { id: session.userId }, password, act);
  switch (checked.kind) {
    case 'ok':
      await recordPasswordEntry(deps.db, session, act);
      return { kind: 'ok' };
    case 'wrong-password':
      return { kind: 'password-needed', error: 'That password is not right.' };
    case 'rate-limited':
      return {
        kind: 'password-needed',
        error: `Too many password attempts. Try again in ${checked.retryAfterS} seconds.`,
        retryAfterS: checked.retryAfterS,
      };
    case 'legacy-password':
      return { kind: 'password-needed', error: LEGACY_PASSWORD_HELP };
    case 'busy':
      return {
        kind: 'password-needed',
        error: 'The server is busy. Try again in a moment.',
        retryAfterS: checked.retryAfterS,
      };
    case 'banned':
    case 'no-user':
      return { kind: 'signed-out' };
  }
}

/**
 * Whether the pages' cookies (`rt`, `_csrf`) are `Secure`: when the request came over https (its scheme,
 * through a trusted proxy its X-Forwarded-Proto), or when PUBLIC_URL says the server is reached over
 * https, even if the TLS proxy in front of it is not one TRUST_PROXY names.
 */
const secureCookies = (request: FastifyRequest): boolean =>
  request.protocol === 'https' || request.server.tokend.config.publicUrl?.startsWith('https:') === true;

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  secret: string,
  maxAgeS: number,
): void {
  reply.setCookie(COOKIE_NAME, secret, {
    maxAge: maxAgeS,
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookies(request),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(COOKIE_NAME, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookies(request),
  });
}

/**
 * What a CSRF token is bound to besides the `_csrf` cookie's secret: the browser's session cookie, or
 * `none` before sign-in (the library takes no empty binding). A `_csrf` cookie planted from elsewhere (a sibling subdomain, another port, plain
 * HTTP) then makes no token that passes on a signed-in user's forms: that needs the session's secret too.
 */
export const csrfBinding = (request: FastifyRequest): string => {
  const session = readSessionCookie(request);
  return session !== undefined && session.length <= 256 ? `rt:${session}` : 'none';
};

/**
 * The key of the HMAC over the binding inside each token. It need not be secret: the binding it covers
 * is the session's own secret, which an attacker planting a `_csrf` cookie does not know.
 */
export const CSRF_BINDING_KEY = 'tokend web forms: CSRF token bound to the session';

/** A CSRF token for this page's forms (its secret lives in the `_csrf` cookie). */
export const csrfToken = (request: FastifyRequest, reply: FastifyReply): string =>
  reply.generateCsrf({ secure: secureCookies(request), userInfo: csrfBinding(request) });

/** `next` only ever leads to a path on this server: never another origin, scheme or `//host`. */
export function localPath(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length > 4096) return undefined;
  if (!next.startsWith('/') || next.startsWith('//')) return undefined;
  // Backslashes and control characters: browsers read some of them as a way to name another host.
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return undefined;
  const base = 'http://local.invalid';
  const url = new URL(next, base);
  if (url.origin !== base) return undefined;
  // As the URL parser writes it: percent-encoded, so a character beyond Latin-1 (which a Location header
  // cannot carry) leads where it was meant to instead of failing the answer.
  const path = `${url.pathname}${url.search}${url.hash}`;
  // Dot segments can fold into `//host` (`/.//evil` is `//evil`): a path that does is refused.
  return path.startsWith('//') ? undefined : path;
}
