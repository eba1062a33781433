// The checks of a signed-in page, as route hooks instead of lines at the top of each handler: who is
// signed in (`requireSession`), and sudo mode for a form that changes something (`requireSudo`, or
// `sudoOrRefuse` where a form's own checks come first). A hook that refuses sends the answer itself; the
// handler then never runs, and reads the session with `signedInUser`.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import {
  clearSessionCookie,
  confirmSudo,
  pageUser,
  sudoRefusalStatus,
  webAct,
  type Session,
} from './session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the signed-in, not banned user of a route with `requireSession` (null elsewhere) */
    signedIn: Session | null;
  }
}

/** Where a family of pages sends a browser that must sign in, and what a banned user gets. */
export interface SessionRule {
  /** the family's page: after a form, sign-in leads back there (a GET comes back to itself) */
  home: string;
  /** sends the page a banned user gets */
  banned: (reply: FastifyReply) => unknown;
}

/**
 * The route's page needs a signed-in user who is not banned: otherwise a browser goes to sign in (and
 * back), a banned user gets the family's page, and the handler does not run.
 */
export function requireSession(rule: SessionRule): preHandlerAsyncHookHandler {
  return async function requireSession(request, reply) {
    const user = await pageUser(request.server.web, request, reply, rule.home, rule.banned);
    if (!user) return reply;
    request.signedIn = user;
  };
}

/** The session `requireSession` found for this request. */
export function signedInUser(request: FastifyRequest): Session {
  if (request.signedIn === null) throw new Error('a signed-in page without requireSession');
  return request.signedIn;
}

/** Why a form was refused for sudo mode: its status (403, or 429 with Retry-After set) and the message. */
export interface SudoRefusal {
  status: number;
  /** why the password given was not taken; undefined: none was given */
  error: string | undefined;
}

/** What a form that needs sudo mode does when it is refused. */
export interface SudoRule {
  /** the family's page, where sign-in leads back to when the session ended meanwhile */
  home: string;
  /** sends the form again, asking for the password */
  refuse: (request: FastifyRequest, reply: FastifyReply, refusal: SudoRefusal) => unknown;
  /**
   * what a form whose session ended meanwhile gets, when not the default (the session cookie cleared, and
   * sign-in, then back to `home`)
   */
  signedOut?: (request: FastifyRequest, reply: FastifyReply) => unknown;
}

/**
 * Sudo mode for the signed-in user's form (`user`: the session `requireSession` found, unless the page
 * found it itself), at the request's time (`request.now`): true to go on; otherwise the answer is sent
 * (the form again, or sign-in when the session ended meanwhile).
 */
export async function sudoOrRefuse(
  request: FastifyRequest,
  reply: FastifyReply,
  password: string | undefined,
  rule: SudoRule,
  user: Session = signedInUser(request),
): Promise<boolean> {
  const web = request.server.web;
  const check = await confirmSudo(web, user, password, webAct(web, request, user, request.now));
  if (check.kind === 'ok') return true;
  if (check.kind === 'signed-out') {
    if (rule.signedOut) {
      await rule.signedOut(request, reply);
      return false;
    }
    clearSessionCookie(request, reply);
    reply.redirect(`/login?next=${encodeURIComponent(rule.home)}`, 303);
    return false;
  }
  await rule.refuse(request, reply, { status: sudoRefusalStatus(reply, check), error: check.error });
  return false;
}

/** The form's password field (`confirm_password`), if the body has one. */
const passwordOf = (request: FastifyRequest): string | undefined => {
  const body = request.body as { confirm_password?: unknown } | undefined;
  return typeof body?.confirm_password === 'string' ? body.confirm_password : undefined;
};

/** The route's form needs sudo mode (after `requireSession` and any loader of what it changes). */
export function requireSudo(rule: SudoRule): preHandlerAsyncHookHandler {
  return async function requireSudo(request, reply) {
    if (!(await sudoOrRefuse(request, reply, passwordOf(request), rule))) return reply;
  };
}
