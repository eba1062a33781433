// fix_privileges runs in the background: the caller gets its answer at once; failures go to the log.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../store/database.ts';
import { fixTokenPrivileges, type FixScope } from './repository.ts';

/** The fix_privileges runs started by requests, in the background; shutdown waits for them. */
export class FixPrivilegesRuns {
  private readonly running = new Set<Promise<void>>();
  private readonly log: FastifyBaseLogger;
  /** Called after each fix run with the rows it rewrote (for metrics) and the UPDATE statements it ran. */
  onFixed: ((rows: number, statements: number) => void) | undefined;

  constructor(log: FastifyBaseLogger) {
    this.log = log;
  }

  startFixPrivileges(db: Db, scope: FixScope): void {
    const job = fixTokenPrivileges(db, scope)
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
