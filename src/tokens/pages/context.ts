// What the token page's actions share: the session and sudo rules of the family, a token as its rows show
// it, the user's own token from a path's id, the answers every action may give (no such token, too many
// new tokens), and the session a new secret's one showing belongs to.
import type { FastifyReply } from 'fastify';
import { tokenPrivilegeNames } from '../../auth/privileges.ts';
import { MAX_ID } from '../../store/schema.ts';
import { integerInRange } from '../../decimal-integer.ts';
import { ACCOUNT_SESSION, messagePage, sendAccountPage } from '../../web/account-pages.ts';
import { timeFromNow } from '../../web/relative-time.ts';
import type { SessionRule } from '../../web/hooks.ts';
import type { Session } from '../../web/session.ts';
import type { LastUsedBatcher } from '../../auth/last-used.ts';
import type { Db } from '../../store/database.ts';
import { findPageToken, type PageToken } from '../repository.ts';
import type { TokenRowView } from './list-view.ts';

/** The token page's sign-in rule: the account pages' (back to /tokens; a banned user gets a page saying so). */
export const TOKENS_SESSION: SessionRule = ACCOUNT_SESSION;

export const parseTokenId = (raw: string): number | undefined => integerInRange(raw, 1, MAX_ID);

/** One of the user's live public tokens from a path's id, or undefined (then not found). */
export async function ownToken(
  db: Db,
  user: Session,
  rawId: string,
  now: number,
): Promise<PageToken | undefined> {
  const id = parseTokenId(rawId);
  return id === undefined ? undefined : findPageToken(db, user.userId, id, now);
}

export const noSuchToken = (reply: FastifyReply) =>
  sendAccountPage(reply, 404, 'Not found', messagePage('No such token', 'You have no token with that id.'));

/** The answer when the user has made TOKEN_CREATE_RATE_LIMIT tokens this window (nothing is made). */
export const tooManyMade = (reply: FastifyReply, title: string, retryAfterS: number) =>
  sendAccountPage(
    reply.header('Retry-After', String(retryAfterS)),
    429,
    title,
    messagePage(
      'Too many new tokens',
      `You have made too many tokens recently. Try again ${timeFromNow(retryAfterS, 0)}; nothing was changed.`,
    ),
  );

export { revealOwner } from '../../web/reveal.ts';

/** A token as the page shows it: a use not yet written counts (the last-used batcher's). */
export function rowView(lastUsed: LastUsedBatcher, t: PageToken): TokenRowView {
  const pending = lastUsed.pendingUse(t.id);
  const used = pending !== undefined && pending > t.last_updated;
  return {
    id: t.id,
    description: t.description,
    privilegeNames: tokenPrivilegeNames(t.privileges),
    createdAt: t.created_at,
    lastUsed: used ? pending : t.never_used ? undefined : t.last_updated,
    lastAddress: (used ? lastUsed.pendingAddress(t.id) : undefined) ?? t.last_address ?? undefined,
    expiresAt: t.expires_at ?? undefined,
  };
}
