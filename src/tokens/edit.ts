// Editing a token: its description and its privileges, within what its owner may hold, kept under the
// same secret. One rule for the token page and `tokend token edit`; the v1 API has no such route. The
// privileges are limit(requested, the owner's privileges as stored now), as minting gives them; the
// description follows the rule of a new token's (description.ts). The change is a `token.edited` event
// in the owner's security log, published like a revocation: a server that caches a token's privileges
// re-reads them.
import type { Db, StoreLayout } from '../store/database.ts';
import { forUpdate } from '../store/sql-dialect.ts';
import { unexpiredAt } from '../auth/live.ts';
import { limit, tokenPrivilegeNames } from '../auth/privileges.ts';
import { recordEvent, withEvents, type Act } from '../auth/security-log.ts';
import { descriptionProblem } from './description.ts';

export interface TokenEdit {
  layout: StoreLayout;
  tokenId: number;
  /** the owner, when the editor is the owner (the token page): another user's token is not found */
  userId?: number;
  /** the new description; undefined: unchanged */
  description?: string;
  /** the requested privileges; undefined: unchanged */
  privileges?: number;
  now: number;
  act: Act;
}

export type TokenEditResult =
  | {
      kind: 'edited';
      id: number;
      userId: number;
      description: string;
      privileges: number;
      /** what changed, in words ('description', 'privileges 6 → 2'); empty: nothing did */
      changed: string[];
    }
  /** no live public token with that id (of that user) */
  | { kind: 'not-found' }
  /** completes "The description …" */
  | { kind: 'bad-description'; problem: string };

const names = (privileges: number): string => tokenPrivilegeNames(privileges).join(' | ') || 'none';

export async function editToken(db: Db, edit: TokenEdit): Promise<TokenEditResult> {
  if (edit.description !== undefined) {
    const problem = descriptionProblem(edit.description, edit.layout);
    if (problem !== undefined) return { kind: 'bad-description', problem };
  }
  return withEvents(db, edit.act, async (trx): Promise<TokenEditResult> => {
    let query = trx
      .selectFrom('tokens')
      .select(['id', 'user_id', 'privileges', 'description'])
      .where('id', '=', edit.tokenId)
      .where('private', '=', 0)
      .where(unexpiredAt('tokens', edit.now));
    if (edit.userId !== undefined) query = query.where('user_id', '=', edit.userId);
    const token = await forUpdate(trx, query).executeTakeFirst();
    if (!token) return { kind: 'not-found' };
    const userId = token.user_id;
    // The owner's row locked, as minting locks it: a change of their privileges waits for this edit, so
    // the token never keeps more than the owner holds once both have committed.
    const owner = await forUpdate(
      trx,
      trx.selectFrom('users').select('privileges').where('id', '=', userId),
    ).executeTakeFirst();
    const before = { description: token.description, privileges: token.privileges };
    const after = {
      description: edit.description ?? before.description,
      privileges:
        edit.privileges === undefined ? before.privileges : limit(edit.privileges, owner?.privileges ?? 0),
    };
    const changed: string[] = [];
    if (after.description !== before.description) changed.push('description');
    if (after.privileges !== before.privileges)
      changed.push(`privileges ${before.privileges} → ${after.privileges} (${names(after.privileges)})`);
    if (changed.length > 0) {
      await trx
        .updateTable('tokens')
        .set({ description: after.description, privileges: after.privileges })
        .where('id', '=', token.id)
        .execute();
      await recordEvent(trx, edit.act, {
        userId,
        kind: 'token.edited',
        tokenId: token.id,
        detail: changed.join('; '),
      });
    }
    return { kind: 'edited', id: token.id, userId, ...after, changed };
  });
}
