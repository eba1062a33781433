// Which ids a row may be given from outside (the imports, `tokend user create --id`). The id columns are
// 32-bit signed integers on PostgreSQL and MySQL/MariaDB (SQLite's hold more, but tokend names no id above
// MAX_ID: revocation by id, the token page), and every backend's id generator (PostgreSQL's identity sequence, MySQL's AUTO_INCREMENT, SQLite's
// AUTOINCREMENT) goes on after the largest id written. An explicit id near MAX_ID would leave no room for
// the ids tokend makes: every later token, web session or user would fail. So ids given from outside stop
// at MAX_EXPLICIT_ID, and the 2^30 ids above it are left for generated rows.
import { MAX_ID } from './schema.ts';

/** Ids kept above every explicit id for the rows tokend makes: 2^30 (1,073,741,824). */
export const ID_HEADROOM = 2 ** 30;

/** The largest id a row may be given from outside: MAX_ID − ID_HEADROOM = 1,073,741,823. */
export const MAX_EXPLICIT_ID = MAX_ID - ID_HEADROOM;

/**
 * Why `id` cannot be given to a new row from outside (an import, `user create --id`), or undefined when
 * it can: a number, an integer from 1 to MAX_EXPLICIT_ID. (Integers written as text or bigints, as a
 * database driver may hand them over, are told apart from other values only for the reason.)
 */
export function explicitIdProblem(id: unknown): string | undefined {
  const digits = typeof id === 'string' && /^[+-]?\d+$/.test(id.trim()) ? BigInt(id.trim()) : undefined;
  const value =
    typeof id === 'number' && Number.isInteger(id) ? BigInt(id) : typeof id === 'bigint' ? id : digits;
  if (value === undefined)
    return `id ${typeof id === 'string' ? JSON.stringify(id) : String(id)} is not an integer`;
  if (value < 1n) return `id ${value} is below 1: ids start at 1`;
  if (value > BigInt(MAX_EXPLICIT_ID))
    return (
      `id ${value} is above ${MAX_EXPLICIT_ID}, the largest id tokend takes from outside ` +
      `(the ids above it, up to ${MAX_ID}, are kept for the rows tokend makes)`
    );
  if (typeof id !== 'number') return `id ${JSON.stringify(String(id))} is not a number`;
  return undefined;
}

/**
 * The ids left to a Ripple-family source database after `tokend import-ripple`: 1 to 2^29 − 1
 * (536,870,911). The source goes on numbering its rows from where it stands, so the import moves tokend's
 * own generators above this range (and above any source id beyond it): a token or user the source makes
 * after an import keeps its id, which tokend has not given to a row of its own, and comes over on the
 * next run. The ids tokend then makes, from 2^29 up, are still ids it takes from outside (an export of
 * the database imports again) until 2^29 more rows have been made.
 */
export const RIPPLE_SOURCE_IDS = 2 ** 29 - 1;
