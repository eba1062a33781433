// Token expiry: the lookup already refuses expired tokens; this sweep only removes their rows (each API
// token's end a `token.revoked` event, means expiry, announced by the sweep that deleted it), the security
// log's events older than SECURITY_LOG_DAYS, and events left unpublished for a day (OUTBOX_MAX_AGE_S).
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/database.ts';
import { deleteExpiredTokens } from './repository.ts';
import { PeriodicJob } from '../periodic.ts';
import { actOutsideRequest, deleteOldEvents, type EventSink } from '../auth/security-log.ts';
import { deleteStaleEvents } from '../auth/event-outbox.ts';

/** Longest lifetime a token may be given at creation: ten years of 365 days, in seconds. */
export const MAX_EXPIRES_IN_S = 10 * 365 * 86_400;

export class ExpirySweeper {
  private readonly job: PeriodicJob;
  /** Called after each sweep with the number of tokens it deleted (for metrics). */
  onSwept: ((deleted: number) => void) | undefined;
  /** Called with the number of events deleted unpublished (for metrics). */
  onEventsDropped: ((dropped: number) => void) | undefined;

  constructor(
    db: Db,
    log: FastifyBaseLogger,
    now: () => number,
    securityLog: { events: EventSink; days: number },
  ) {
    this.job = new PeriodicJob(async () => {
      const at = now();
      try {
        const deleted = await deleteExpiredTokens(db, actOutsideRequest('expiry', at, securityLog.events));
        this.onSwept?.(deleted);
        if (deleted > 0) log.info({ deleted }, 'deleted expired tokens');
      } catch (err) {
        log.error({ err }, 'deleting expired tokens failed; will retry');
      }
      try {
        const deleted = await deleteOldEvents(db, at, securityLog.days);
        if (deleted > 0) log.info({ deleted }, 'deleted old security log events');
      } catch (err) {
        log.error({ err }, 'deleting old security log events failed; will retry');
      }
      try {
        const dropped = await deleteStaleEvents(db, at);
        if (dropped > 0) {
          this.onEventsDropped?.(dropped);
          log.warn({ dropped }, 'deleted events unpublished for a day (Redis unreachable all that time)');
        }
      } catch (err) {
        log.error({ err }, 'deleting stale unpublished events failed; will retry');
      }
    });
  }

  /** Sweeps every `intervalMs`; the timer never keeps the process alive. */
  start(intervalMs: number): void {
    this.job.start(intervalMs);
  }

  /** Deletes the tokens expired by now. Sweeps never overlap; a failure is logged and retried next time. */
  sweep(): Promise<void> {
    return this.job.runNow();
  }

  /** Stops the timer and waits for a sweep in progress (before the database closes). */
  stop(): Promise<void> {
    return this.job.stop();
  }
}
