// tokend export: every transfer table of the database, as JSON Lines (see format.ts), read page by page.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../store/database.ts';
import { FORMAT, VERSION, TRANSFER_TABLES, tablesIn, type AnyDb, type Header, type Row } from './format.ts';

const PAGE = 1000;

/** Where lines go; resolves when the line may be followed by the next (back-pressure). */
export type LineSink = (line: string) => Promise<void>;

/** Rows after `after` in key order: (k1, k2) > (a1, a2) spelled out, since not every dialect has row values. */
function afterKey(key: readonly string[], after: Row): RawBuilder<boolean> {
  const [first, ...rest] = key;
  const v = after[first!];
  if (rest.length === 0) return sql<boolean>`${sql.ref(first!)} > ${v}`;
  return sql<boolean>`(${sql.ref(first!)} > ${v} OR (${sql.ref(first!)} = ${v} AND ${afterKey(rest, after)}))`;
}

export async function exportDatabase(
  database: Db,
  write: LineSink,
  now: number,
): Promise<Record<string, number>> {
  const db = database as unknown as AnyDb;
  const present = await tablesIn(db);
  const tables = TRANSFER_TABLES.filter((t) => present.has(t.name));
  const header: Header = {
    format: FORMAT,
    version: VERSION,
    exported_at: now,
    tables: tables.map((t) => t.name),
  };
  await write(JSON.stringify(header));
  const counts: Record<string, number> = {};
  for (const table of tables) {
    let count = 0;
    let last: Row | undefined;
    for (;;) {
      let query = db.selectFrom(table.name).selectAll();
      if (last !== undefined) query = query.where(afterKey(table.key, last));
      for (const column of table.key) query = query.orderBy(column);
      const rows = (await query.limit(PAGE).execute()) as Row[];
      for (const row of rows) await write(JSON.stringify({ table: table.name, row }));
      count += rows.length;
      if (rows.length < PAGE) break;
      last = rows[rows.length - 1];
    }
    counts[table.name] = count;
  }
  await write(JSON.stringify({ end: true, counts }));
  return counts;
}
