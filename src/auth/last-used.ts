// Token uses are collected in memory and written in one statement at least once a second,
// and on shutdown, instead of one UPDATE per request.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/database.ts';
import { sql } from 'kysely';
import { greatest } from '../store/sql-dialect.ts';
import { PeriodicJob } from '../periodic.ts';

/** Largest batch sent as one statement (keeps every dialect's parameter limit far away). */
const MAX_BATCH = 2000;

export class LastUsedBatcher {
  private pending = new Map<number, number>();
  private readonly job = new PeriodicJob(() => this.writePending());
  private readonly db: Db;
  private readonly log: FastifyBaseLogger;
  /** Sizes of the batches written so far (for metrics). */
  onFlush: ((size: number) => void) | undefined;

  constructor(db: Db, log: FastifyBaseLogger) {
    this.db = db;
    this.log = log;
  }

  touch(tokenId: number, at: number): void {
    this.pending.set(tokenId, at);
  }

  /** The time of a use not yet written, if any. */
  pendingUse(tokenId: number): number | undefined {
    return this.pending.get(tokenId);
  }

  forget(tokenId: number): void {
    this.pending.delete(tokenId);
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
    this.pending = new Map();
    const uses = [...batch];
    try {
      for (let i = 0; i < uses.length; i += MAX_BATCH) {
        await recordTokenUses(this.db, uses.slice(i, i + MAX_BATCH));
      }
      this.onFlush?.(uses.length);
    } catch (err) {
      // Keep the uses for the next flush; a newer use of the same token wins.
      for (const [id, at] of batch) if ((this.pending.get(id) ?? 0) < at) this.pending.set(id, at);
      this.log.error({ err, pending: this.pending.size }, 'writing token uses failed; will retry');
    }
  }
}

/**
 * Writes a batch of uses in one statement. GREATEST/max keeps last_updated from moving backwards
 * when several instances flush uses of the same token.
 */
export async function recordTokenUses(db: Db, uses: ReadonlyArray<readonly [number, number]>) {
  if (uses.length === 0) return;
  const cases = sql.join(
    uses.map(([id, at]) => sql`WHEN ${id} THEN ${at}`),
    sql` `,
  );
  const used = sql<number>`CASE id ${cases} ELSE last_updated END`;
  await db
    .updateTable('tokens')
    .set({ last_updated: greatest(db, sql<number>`last_updated`, used) })
    .where(
      'id',
      'in',
      uses.map(([id]) => id),
    )
    .execute();
}
