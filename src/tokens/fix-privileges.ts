// fix_privileges runs in the background: the caller gets its answer at once; failures go to the log.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/database.ts';
import { fixTokenPrivileges, type FixScope } from './repository.ts';
import { recordEvent, withEvents, type Act } from '../auth/security-log.ts';

/** A run that rewrote tokens: `privileges.changed` of the user in scope, or of user 0 for every user. */
const recordFix = (db: Db, act: Act, userId: number, rows: number): Promise<void> =>
  recordEvent(db, act, {
    userId,
    kind: 'privileges.changed',
    detail: `fix_privileges: ${rows} tokens limited to their owner's privileges`,
  });

/** The fix_privileges runs started by requests, in the background; shutdown waits for them. */
export class FixPrivilegesRuns {
  private readonly running = new Set<Promise<void>>();
  private readonly log: FastifyBaseLogger;
  /** Called after each fix run with the rows it rewrote (for metrics) and the UPDATE statements it ran. */
  onFixed: ((rows: number, statements: number) => void) | undefined;

  constructor(log: FastifyBaseLogger) {
    this.log = log;
  }

  /**
   * A run that rewrote tokens is a `privileges.changed` event (published): of the user in scope, or of
   * user 0 for a run over every user (which does not know whose tokens it rewrote).
   */
  startFixPrivileges(db: Db, scope: FixScope, act: Act): void {
    // For one user, the rewrite and its event commit together; a run over every user is many statements
    // (each its own transaction), and its event follows them.
    const run =
      scope.kind === 'user'
        ? withEvents(db, act, async (trx) => {
            const result = await fixTokenPrivileges(trx, scope);
            if (result.rows > 0) await recordFix(trx, act, scope.userId, result.rows);
            return result;
          })
        : fixTokenPrivileges(db, scope).then(async (result) => {
            if (result.rows > 0) await recordFix(db, act, 0, result.rows);
            return result;
          });
    const job = run
      .then(({ rows, statements }) => {
        this.onFixed?.(rows, statements);
        this.log.info({ scope, rows, statements }, 'fix_privileges finished');
      })
      .catch((err: unknown) => this.log.error({ err, scope }, 'fix_privileges failed'))
      .finally(() => this.running.delete(job));
    this.running.add(job);
  }

  /** Waits for every running job (graceful shutdown; tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
