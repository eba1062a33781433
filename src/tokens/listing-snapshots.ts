// Deep pages of a token listing without walking the index.
//
// A page is `LIMIT l OFFSET (p-1)·l` over the user's public, unexpired tokens in id order, and no B-tree
// skips entries without visiting them: page 200 of 10,000 tokens walks 9,950 index entries (SQLite
// ~50 ns each, MariaDB ~0.4 µs). For deep pages, tokend keeps a snapshot of the user's public token ids,
// finds the page's first id in memory and asks for `id >= first LIMIT l`, which costs what page 1 costs.
//
// A snapshot is valid for one value of users.tokens_version, which database triggers bump on every change
// to the set of a user's listed tokens (migration 0006), from any process. The credential lookup reads the
// owner's version in the same query as the token, so checking a snapshot costs no query; a stale snapshot
// is never used, on one instance or many. Expiry is the one change that happens without a write: each
// snapshot keeps its tokens' expiry times and skips the expired ones when counting the offset, against
// the same clock as the query.
import type { Db } from '../store/database.ts';
import { listPublicTokens, publicTokenIds, type ListedToken } from './repository.ts';

/** From this offset on, pages come from a snapshot; shallower pages are cheap enough with OFFSET. */
export const SNAPSHOT_MIN_OFFSET = 500;
/** Ids held across every snapshot (16 bytes each: ~16 MB); the least recently used snapshots go first. */
export const SNAPSHOT_CAPACITY = 1_000_000;

export interface ListingSnapshot {
  /** users.tokens_version when the ids were read (in the same statement) */
  readonly version: number;
  /** the ids of the user's public tokens, ascending */
  readonly ids: Float64Array;
  /** their expiry in Unix seconds (Infinity for none); undefined when none of them expires */
  readonly expires: Float64Array | undefined;
}

export function makeSnapshot(
  version: number,
  rows: ReadonlyArray<{ id: number; expires_at: number | null }>,
): ListingSnapshot {
  const ids = new Float64Array(rows.length);
  let expires: Float64Array | undefined;
  rows.forEach((row, i) => {
    ids[i] = row.id;
    if (row.expires_at !== null) {
      expires ??= new Float64Array(rows.length).fill(Infinity);
      expires[i] = row.expires_at;
    }
  });
  return { version, ids, expires };
}

/** The id of the token at `offset` among those unexpired at `now`; undefined when the page is past the end. */
export function firstIdOfPage(snapshot: ListingSnapshot, offset: number, now: number): number | undefined {
  const { ids, expires } = snapshot;
  if (expires === undefined) return offset < ids.length ? ids[offset] : undefined;
  let live = 0;
  for (let i = 0; i < ids.length; i++) {
    if (expires[i]! <= now) continue;
    if (live === offset) return ids[i];
    live++;
  }
  return undefined;
}

export class ListingSnapshots {
  /** in order of last use, oldest first */
  readonly #byUser = new Map<number, ListingSnapshot>();
  #held = 0;

  readonly capacity: number;
  readonly #observe: ((held: boolean) => void) | undefined;

  /** `observe` hears of every deep page: whether its snapshot was held or had to be read. */
  constructor(capacity: number = SNAPSHOT_CAPACITY, observe?: (held: boolean) => void) {
    this.capacity = capacity;
    this.#observe = observe;
  }

  /** The snapshot of this user at exactly this version, if held. */
  get(userId: number, version: number): ListingSnapshot | undefined {
    const snapshot = this.#byUser.get(userId);
    if (snapshot === undefined || snapshot.version !== version) return undefined;
    this.#byUser.delete(userId);
    this.#byUser.set(userId, snapshot);
    return snapshot;
  }

  put(userId: number, snapshot: ListingSnapshot): void {
    this.#drop(userId);
    if (snapshot.ids.length > this.capacity) return;
    this.#byUser.set(userId, snapshot);
    this.#held += snapshot.ids.length;
    for (const [oldest] of this.#byUser) {
      if (this.#held <= this.capacity) break;
      this.#drop(oldest);
    }
  }

  /** Ids held across every snapshot. */
  get held(): number {
    return this.#held;
  }

  #drop(userId: number): void {
    const old = this.#byUser.get(userId);
    if (old === undefined) return;
    this.#byUser.delete(userId);
    this.#held -= old.ids.length;
  }

  /**
   * One page of the user's public, unexpired tokens: what listPublicTokens(limit, offset) answers, read
   * from the page's first id on when the page is deep. `version` is the owner's tokens_version as the
   * request's credential lookup read it.
   */
  async page(
    db: Db,
    userId: number,
    version: number,
    limit: number,
    offset: number,
    now: number,
  ): Promise<ListedToken[]> {
    if (offset < SNAPSHOT_MIN_OFFSET) return listPublicTokens(db, userId, limit, offset, now);
    let snapshot = this.get(userId, version);
    this.#observe?.(snapshot !== undefined);
    if (snapshot === undefined) {
      const { version: current, tokens } = await publicTokenIds(db, userId);
      snapshot = makeSnapshot(current, tokens);
      // A change after the credential lookup gives a newer version: the fresher snapshot serves this page.
      this.put(userId, snapshot);
    }
    const first = firstIdOfPage(snapshot, offset, now);
    if (first === undefined) return [];
    return listPublicTokens(db, userId, limit, 0, now, first);
  }
}
