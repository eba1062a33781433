// The store's types that its drivers share with it: the Kysely handle, the dialects, the pools' figures.
// A file of its own, so that the drivers need not import the module that opens them.
import type { Kysely } from 'kysely';
import type { DatabaseConfig } from '../config.ts';
import type { Database } from './schema.ts';

export type Dialect = DatabaseConfig['kind'];
export type Db = Kysely<Database>;

/** main: every query but the credential lookup; lookup: the credential lookup (PostgreSQL, see openPostgres). */
export type PoolName = 'main' | 'lookup';

export interface PoolStats {
  /** Connections open (busy and idle). */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** Largest number of connections the pool may open. */
  max: number;
}
