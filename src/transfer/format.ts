// The export file: JSON Lines. A header line, then one line per row, table by table in foreign-key order,
// then a trailer with the row counts (so a cut-off file is refused, not half imported).
//   {"format":"tokend-export","version":1,"exported_at":1700000000,"tables":["users","tokens",…]}
//   {"table":"users","row":{"id":1,"username":"alice",…}}
//   {"end":true,"counts":{"users":1,"tokens":3,…}}
// Secrets are never in it because none are stored: tokens and client secrets are SHA-256 hashes and
// passwords are bcrypt hashes.
import type { Kysely } from 'kysely';

export const FORMAT = 'tokend-export';
export const VERSION = 1;

export interface TransferTable {
  name: string;
  /** Primary key columns: rows are read in this order, page by page. */
  key: readonly string[];
  /** The key is an auto-increment id, whose sequence must move past the imported ids (PostgreSQL). */
  serial: boolean;
}

/**
 * What moves, parents before children. OAuth authorization codes are left out: they live for minutes,
 * and a client simply asks for a new one.
 */
export const TRANSFER_TABLES: readonly TransferTable[] = [
  { name: 'users', key: ['id'], serial: true },
  { name: 'tokens', key: ['id'], serial: true },
  { name: 'oauth_clients', key: ['id'], serial: false },
  { name: 'oauth_consents', key: ['user_id', 'client_id'], serial: false },
  { name: 'oauth_access_tokens', key: ['id'], serial: true },
  { name: 'oauth_refresh_tokens', key: ['id'], serial: true },
  { name: 'ripple_imported_tokens', key: ['id'], serial: false },
  { name: 'security_log', key: ['id'], serial: true },
];

export type Cell = string | number | null;
export type Row = Record<string, Cell>;

export interface Header {
  format: typeof FORMAT;
  version: number;
  exported_at: number;
  tables: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are copied table by table, whatever their columns
export type AnyDb = Kysely<any>;

/** The transfer tables this database has, with their columns. */
export async function tablesIn(db: AnyDb): Promise<Map<string, Set<string>>> {
  const present = new Map<string, Set<string>>();
  const meta = await db.introspection.getTables();
  for (const t of meta) present.set(t.name, new Set(t.columns.map((c) => c.name)));
  return new Map(
    TRANSFER_TABLES.filter((t) => present.has(t.name)).map((t) => [t.name, present.get(t.name)!]),
  );
}
