// Regenerating a token: the revocation by id and mintToken (src/auth/mint.ts), in one transaction.
import type { Db, StoreLayout } from '../store/database.ts';
import { mintToken, type MintedToken } from '../auth/mint.ts';
import { deletePublicTokenOfUser, findPublicTokenOfUser } from './repository.ts';
import { withEvents, type Act } from '../auth/security-log.ts';

export interface RegeneratedToken {
  /** the id of the token that ended */
  replaced: number;
  /** its replacement: a new id and secret */
  token: MintedToken;
  description: string;
  /** Unix seconds; undefined: never expires */
  expiresAt: number | undefined;
}

/**
 * Replaces one of the user's public tokens by a new one with the same description and privileges (and the
 * same expiry, unless `expiresAt` gives a new one), in one transaction: the old one is deleted as the token page's and the API's revocation by id delete it
 * (so its secret stops working from the next request on), and the new one is minted by mintToken, whose
 * rules all apply (its privileges limited by the owner's as stored now; the per-user cap, which the old
 * token no longer counts against). Undefined when the user has no such live token, or when a concurrent
 * request ended it first. The caller forgets the old token's pending use (LastUsedBatcher.forget).
 */
export async function regenerateToken(
  db: Db,
  request: {
    layout: StoreLayout;
    userId: number;
    tokenId: number;
    now: number;
    cap: number;
    act: Act;
    /** the new token's expiry (Unix seconds, or null: never); undefined: the old token's */
    expiresAt?: number | null;
  },
): Promise<RegeneratedToken | undefined> {
  const run = async (trx: Db): Promise<RegeneratedToken | undefined> => {
    const old = await findPublicTokenOfUser(trx, request.userId, request.tokenId, request.now);
    if (!old || !(await deletePublicTokenOfUser(trx, request.userId, old.id, request.act, 'regenerated')))
      return undefined;
    const token = await mintToken(trx, {
      layout: request.layout,
      userId: request.userId,
      requested: old.privileges,
      description: old.description,
      private: false,
      now: request.now,
      expiresAt: request.expiresAt === undefined ? (old.expires_at ?? null) : request.expiresAt,
      cap: request.cap,
      act: request.act,
      detail: `regenerated ${old.id}`,
    });
    const expiresAt = request.expiresAt === undefined ? old.expires_at : (request.expiresAt ?? undefined);
    return { replaced: old.id, token, description: old.description, expiresAt };
  };
  return withEvents(db, request.act, run);
}
