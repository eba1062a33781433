// Token expiry: the lookup already refuses expired tokens; this sweep only removes their rows.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/database.ts';
import { deleteExpiredTokens } from './repository.ts';

/** Longest lifetime a token may be given at creation: ten years of 365 days, in seconds. */
export const MAX_EXPIRES_IN_S = 10 * 365 * 86_400;

export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();
  private readonly db: Db;
  private readonly log: FastifyBaseLogger;
  private readonly now: () => number;
  /** Called after each sweep with the number of tokens it deleted (for metrics). */
  onSwept: ((deleted: number) => void) | undefined;

  constructor(db: Db, log: FastifyBaseLogger, now: () => number) {
    this.db = db;
    this.log = log;
    this.now = now;
  }

  /** Sweeps every `intervalMs`; the timer never keeps the process alive. */
  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** Deletes the tokens expired by now. Sweeps never overlap; a failure is logged and retried next time. */
  sweep(): Promise<void> {
    this.sweeping = this.sweeping.then(async () => {
      try {
        const deleted = await deleteExpiredTokens(this.db, this.now());
        this.onSwept?.(deleted);
        if (deleted > 0) this.log.info({ deleted }, 'deleted expired tokens');
      } catch (err) {
        this.log.error({ err }, 'deleting expired tokens failed; will retry');
      }
    });
    return this.sweeping;
  }

  /** Stops the timer and waits for a sweep in progress (before the database closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }
}
