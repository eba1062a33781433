// The descriptions of a user's own live public API tokens, by id: how a page names a token a person
// recognises (the security log: "token 21 “score uploader”") instead of by its id alone. One indexed query
// for a page's ids; a token since revoked, another user's, a web session or a private token is absent.
import type { Db } from '../store/database.ts';

/** At most this many ids are looked up at once (a page of the log names fewer). */
const MAX_IDS = 500;

export async function tokenDescriptions(
  db: Db,
  userId: number,
  ids: readonly number[],
): Promise<ReadonlyMap<number, string>> {
  const wanted = [...new Set(ids)].slice(0, MAX_IDS);
  if (wanted.length === 0) return new Map();
  const rows = await db
    .selectFrom('tokens')
    .select(['id', 'description'])
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .where('id', 'in', wanted)
    .execute();
  return new Map(rows.map((r) => [r.id, r.description]));
}
