/** True when a write failed on a UNIQUE constraint, in any of the three dialects. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e.code === '23505' || e.code === 'ER_DUP_ENTRY') return true; // PostgreSQL, MySQL/MariaDB
  return typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed'); // SQLite
}

/** A database server did not hand out a connection, or did not answer a query, in time. */
export class DatabaseTimeoutError extends Error {
  readonly waitedFor: 'connection' | 'query';
  constructor(waitedFor: 'connection' | 'query', cause?: unknown) {
    super(`the database did not answer in time (waiting for a ${waitedFor})`, { cause });
    this.name = 'DatabaseTimeoutError';
    this.waitedFor = waitedFor;
  }
}
