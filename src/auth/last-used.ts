// Token uses are collected in memory and written in one statement at least once a second,
// and on shutdown, instead of one UPDATE per request. The address of each token's latest use goes in the
// same statement (tokens.last_address, shown on the token page): kept as the request gave it, made
// canonical (src/http/client-address.ts, given by app.ts) only when written.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/database.ts';
import { sql } from 'kysely';
import { greatest } from '../store/sql-dialect.ts';
import { PeriodicJob } from '../periodic.ts';

/** Largest batch sent as one statement (keeps every dialect's parameter limit far away). */
const MAX_BATCH = 2000;

/** An address as the security log keeps it, or undefined for one that is none (given by app.ts). */
export type CanonicalAddress = (raw: string) => string | undefined;

export class LastUsedBatcher {
  private pending = new Map<number, number>();
  /** the address of each pending use, as the request gave it */
  private addresses = new Map<number, string>();
  /**
   * The uses a flush is writing now, and their addresses: still answered as pending until the write has
   * committed, so a page read between the two shows the use, not the row before it.
   */
  private writing = new Map<number, number>();
  private writingAddresses = new Map<number, string>();
  private readonly job = new PeriodicJob(() => this.writePending());
  private readonly db: Db;
  private readonly log: FastifyBaseLogger;
  /** Sizes of the batches written so far (for metrics). */
  onFlush: ((size: number) => void) | undefined;

  private readonly canonical: CanonicalAddress;

  constructor(db: Db, log: FastifyBaseLogger, canonical: CanonicalAddress = () => undefined) {
    this.db = db;
    this.log = log;
    this.canonical = canonical;
  }

  touch(tokenId: number, at: number, address?: string): void {
    this.pending.set(tokenId, at);
    if (address !== undefined) this.addresses.set(tokenId, address);
  }

  /** The address of a use not yet written, canonical, if any. */
  pendingAddress(tokenId: number): string | undefined {
    const raw = this.addresses.get(tokenId) ?? this.writingAddresses.get(tokenId);
    return raw === undefined ? undefined : this.canonical(raw);
  }

  /** The time of a use not yet written, if any. */
  pendingUse(tokenId: number): number | undefined {
    return this.pending.get(tokenId) ?? this.writing.get(tokenId);
  }

  forget(tokenId: number): void {
    this.pending.delete(tokenId);
    this.addresses.delete(tokenId);
    this.writing.delete(tokenId);
    this.writingAddresses.delete(tokenId);
  }

  start(intervalMs: number): void {
    this.job.start(intervalMs);
  }

  /** Writes everything pending. Flushes never overlap; a failed batch is merged back and retried. */
  flush(): Promise<void> {
    return this.job.runNow();
  }

  /** Stops the timer and writes what is pending (shutdown). */
  async stop(): Promise<void> {
    await this.job.stop();
    await this.flush();
  }

  private async writePending(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    const addresses = this.addresses;
    this.pending = new Map();
    this.addresses = new Map();
    this.writing = batch;
    this.writingAddresses = addresses;
    const uses: TokenUse[] = [];
    for (const [id, at] of batch) {
      const raw = addresses.get(id);
      uses.push([id, at, raw === undefined ? null : (this.canonical(raw) ?? null)]);
    }
    try {
      for (let i = 0; i < uses.length; i += MAX_BATCH) {
        await recordTokenUses(this.db, uses.slice(i, i + MAX_BATCH));
      }
      this.onFlush?.(uses.length);
    } catch (err) {
      // Keep the uses for the next flush; a newer use of the same token wins.
      for (const [id, at] of batch)
        if ((this.pending.get(id) ?? 0) < at) {
          this.pending.set(id, at);
          const raw = addresses.get(id);
          if (raw !== undefined) this.addresses.set(id, raw);
        }
      this.log.error({ err, pending: this.pending.size }, 'writing token uses failed; will retry');
    } finally {
      this.writing = new Map();
      this.writingAddresses = new Map();
    }
  }
}

/** A token's id, the time of its use, and the canonical address it came from (null: unknown). */
export type TokenUse = readonly [id: number, at: number, address?: string | null];

/**
 * Writes a batch of uses in one statement. GREATEST/max keeps last_updated from moving backwards
 * when several instances flush uses of the same token, and the address follows only a use at least as
 * new as the one stored. `last_address` is assigned first: MySQL reads a column assigned earlier in the
 * same SET as its new value, the others as the old one, and both must compare with the old time.
 */
export async function recordTokenUses(db: Db, uses: readonly TokenUse[]) {
  if (uses.length === 0) return;
  const cases = sql.join(
    uses.map(([id, at]) => sql`WHEN ${id} THEN ${at}`),
    sql` `,
  );
  const used = sql<number>`CASE id ${cases} ELSE last_updated END`;
  const withAddress = uses.filter((use) => use[2] !== undefined && use[2] !== null);
  const addressCases = sql.join(
    withAddress.map(
      ([id, at, address]) =>
        sql`WHEN ${id} THEN CASE WHEN last_updated <= ${at} THEN ${address} ELSE last_address END`,
    ),
    sql` `,
  );
  const address = sql<string | null>`CASE id ${addressCases} ELSE last_address END`;
  await db
    .updateTable('tokens')
    .set(
      withAddress.length === 0
        ? { last_updated: greatest(db, sql<number>`last_updated`, used) }
        : { last_address: address, last_updated: greatest(db, sql<number>`last_updated`, used) },
    )
    .where(
      'id',
      'in',
      uses.map(([id]) => id),
    )
    .execute();
}
