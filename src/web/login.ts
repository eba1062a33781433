// Signing in through the web: the one password check (src/users/password-login.ts), ending in a new web
// session whose secret becomes the `rt` cookie.
import { checkPasswordLogin } from '../users/password-login.ts';
import { startSession } from '../auth/sessions.ts';
import type { WebDeps } from './session.ts';
import type { Act } from '../auth/security-log.ts';

export type WebLoginResult =
  | { kind: 'signed-in'; secret: string; userId: number }
  | { kind: 'bad-credentials' }
  | { kind: 'rate-limited'; retryAfterS: number }
  | { kind: 'legacy-password' }
  | { kind: 'banned' }
  | { kind: 'busy'; retryAfterS: number };

export async function webLogin(
  deps: WebDeps,
  input: { username: string; password: string },
  /** the request (webAct without a session) */
  act: Act,
  abandoned?: () => boolean,
): Promise<WebLoginResult> {
  const checked = await checkPasswordLogin(
    deps,
    { username: input.username },
    input.password,
    act,
    abandoned,
  );
  switch (checked.kind) {
    case 'no-user':
    case 'wrong-password':
      return { kind: 'bad-credentials' };
    case 'rate-limited':
    case 'legacy-password':
    case 'busy':
      return checked;
    case 'banned':
      return { kind: 'banned' };
    case 'ok': {
      // The session starts when the check ends (which may have waited in the password queue).
      const session = await startSession(deps.db, checked.user, { ...act, at: deps.clock() });
      return { kind: 'signed-in', secret: session.secret, userId: checked.user.id };
    }
  }
}
