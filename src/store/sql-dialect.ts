// Every SQL difference between SQLite, PostgreSQL and MySQL/MariaDB that a repository meets, written
// once. Each function takes the Kysely handle or transaction the statement runs on and finds the dialect
// from it, so no caller passes or tests a dialect. (The schema's own differences are the migrations'.)
import {
  MysqlIntrospector,
  PostgresIntrospector,
  SqliteIntrospector,
  sql,
  type Expression,
  type Insertable,
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqlBool,
  type Updateable,
} from 'kysely';
import type { Db, Dialect, Store } from './database.ts';
import type { Database } from './schema.ts';
import { MAX_EXPLICIT_ID } from './ids.ts';

/**
 * The dialect of a Kysely handle or transaction. Kysely's public API names the dialect through the
 * introspector its dialect makes (Kysely#introspection, also on a transaction); the query executor's
 * adapter would say it too, but Kysely keeps getExecutor() internal.
 */
export function dialectOf<DB>(db: Kysely<DB>): Dialect {
  const introspector = db.introspection;
  if (introspector instanceof SqliteIntrospector) return 'sqlite';
  if (introspector instanceof PostgresIntrospector) return 'postgres';
  if (introspector instanceof MysqlIntrospector) return 'mysql';
  throw new Error('tokend runs on SQLite, PostgreSQL or MySQL/MariaDB only');
}

/** The tables whose key is a generated integer id. */
type TableWithId = 'users' | 'tokens' | 'oauth_access_tokens' | 'oauth_refresh_tokens';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one body for any table; callers are typed
type LooseDb = Kysely<any>;

/**
 * Inserts one row into `table` and returns its id, generated or given: RETURNING on PostgreSQL and
 * SQLite, the insert id MySQL reports on MySQL (which has no RETURNING).
 */
export async function insertReturningId<T extends TableWithId>(
  db: Db,
  table: T,
  values: Insertable<Database[T]>,
): Promise<number> {
  const insert = (db as LooseDb).insertInto(table).values(values);
  if (dialectOf(db) === 'mysql') {
    const result = await insert.executeTakeFirstOrThrow();
    return 'id' in values && typeof values.id === 'number' ? values.id : Number(result.insertId);
  }
  const row = (await insert.returning('id').executeTakeFirstOrThrow()) as { id: number };
  return row.id;
}

/**
 * Inserts a row into `table`, or where a row with the same `key` (a primary or unique key) is there
 * already, updates that row with `update`: ON CONFLICT (key) DO UPDATE on PostgreSQL and SQLite, ON
 * DUPLICATE KEY UPDATE on MySQL.
 */
export async function upsert<T extends keyof Database>(
  db: Db,
  table: T,
  values: Insertable<Database[T]>,
  key: ReadonlyArray<keyof Database[T] & string>,
  update: Updateable<Database[T]>,
): Promise<void> {
  const insert = (db as LooseDb).insertInto(table as string).values(values);
  const set = update as Record<string, unknown>;
  if (dialectOf(db) === 'mysql') await insert.onDuplicateKeyUpdate(set).execute();
  else await insert.onConflict((oc) => oc.columns([...key]).doUpdateSet(set)).execute();
}

/** The largest of the values: GREATEST on the servers, the many-argument max() on SQLite. */
export function greatest<DB, T>(db: Kysely<DB>, ...values: ReadonlyArray<Expression<T>>): RawBuilder<T> {
  const name = dialectOf(db) === 'sqlite' ? sql.raw('max') : sql.raw('GREATEST');
  return sql<T>`${name}(${sql.join(values)})`;
}

/**
 * The query, locking the rows it reads until the transaction ends (FOR UPDATE) on the servers. SQLite
 * has no row locks and needs none: a transaction there holds the one write lock from its start (see
 * NodeSqliteDatabase, BEGIN IMMEDIATE).
 */
export function forUpdate<DB, TB extends keyof DB, O>(
  db: Kysely<DB>,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return dialectOf(db) === 'sqlite' ? query : query.forUpdate();
}

// ---- generated ids -----------------------------------------------------------------------------------

/**
 * Makes the next generated id of `table` greater than `upTo`, never lowering it: rows inserted meanwhile
 * by a running server take ids above the range an import is writing, instead of ones it needs. `upTo`
 * is an id given from outside, so at most MAX_EXPLICIT_ID (src/store/ids.ts): never the end of the range.
 */
export async function reserveIds(db: Db, table: 'users' | 'tokens', upTo: number): Promise<void> {
  if (!Number.isSafeInteger(upTo) || upTo > MAX_EXPLICIT_ID)
    throw new RangeError(`reserveIds: ${upTo} is not an id up to ${MAX_EXPLICIT_ID}`);
  switch (dialectOf(db)) {
    case 'postgres':
      // nextval, so a sequence already past upTo (ids handed out, rows since deleted) stays where it is.
      await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), GREATEST(${upTo}::bigint, nextval(pg_get_serial_sequence(${table}, 'id'))))`.execute(
        db,
      );
      return;
    case 'mysql': {
      const row = await sql<{
        next: number | string | null;
      }>`SELECT AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table}`.execute(
        db,
      );
      const next = Number(row.rows[0]?.next ?? 0);
      if (next <= upTo)
        await sql`ALTER TABLE ${sql.table(table)} AUTO_INCREMENT = ${sql.lit(upTo + 1)}`.execute(db);
      return;
    }
    case 'sqlite':
      // AUTOINCREMENT tables draw their next id from sqlite_sequence (past any id ever used).
      await sql`UPDATE sqlite_sequence SET seq = ${upTo} WHERE name = ${table} AND seq < ${upTo}`.execute(db);
      await sql`INSERT INTO sqlite_sequence (name, seq) SELECT ${table}, ${upTo} WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ${table})`.execute(
        db,
      );
  }
}

/**
 * After rows were written into `table` with explicit ids: makes its next generated id follow the
 * largest id in it. PostgreSQL's identity sequence does not move for explicit ids, so it is set past
 * the largest; MySQL's AUTO_INCREMENT and SQLite's AUTOINCREMENT follow explicit ids by themselves.
 */
export async function followExplicitIds<DB>(db: Kysely<DB>, table: string): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), COALESCE((SELECT MAX(id) FROM ${sql.table(table)}), 0) + 1, false)`.execute(
    db,
  );
}

// ---- a column against a batch of values, in a query compiled once -----------------------------------

/** `column` equal to one of a batch's values, for a query compiled once per `key` (see anyOf). */
export interface AnyOfMatch {
  /** Batches with the same key compile to the same SQL text: compile a query once per key and keep it. */
  readonly key: number;
  /** The condition, to compile the query of this key with: where(match.condition()). */
  condition(): RawBuilder<SqlBool>;
  /** The condition's parameters for this batch, in their order in the SQL text. */
  readonly parameters: readonly unknown[];
}

/**
 * "`column` is any of these values" for a query that is compiled once and then only run (Store.hotQuery),
 * so the batch sizes must map to few SQL texts. On PostgreSQL one text for every batch size:
 * `column = any($n)`, the values going as one array parameter (key 0). On SQLite and MySQL `column in
 * (…)`, the list padded to the next power of two with the batch's last value (key: that length), so a
 * connection prepares at most log2(the largest batch) + 1 texts. Each batch needs one value at least.
 *
 * const hashIn = anyOf(db, 'tokens.token_hash');
 * const match = hashIn(hashes); // then, once per match.key: query.where(match.condition()).compile()
 */
export function anyOf<DB>(db: Kysely<DB>, column: string): (values: readonly unknown[]) => AnyOfMatch {
  const ref = sql.ref(column);
  if (dialectOf(db) === 'postgres')
    return (values) => {
      const parameters = [[...values]];
      return { key: 0, parameters, condition: () => sql<SqlBool>`${ref} = any(${parameters[0]})` };
    };
  return (values) => {
    let size = 1;
    while (size < values.length) size *= 2;
    const parameters = [...values];
    while (parameters.length < size) parameters.push(values[values.length - 1]);
    return { key: size, parameters, condition: () => sql<SqlBool>`${ref} in (${sql.join(parameters)})` };
  };
}

/**
 * A hot read (Store.hotQuery) of the rows whose `column` is any of a batch of values: `query` is compiled
 * with anyOf's condition once per batch shape and then only run. The statement's parameters are
 * `leading` (those of `query`'s own WHEREs, in order), then the batch's values.
 */
export function hotReadAnyOf<Row>(
  store: Pick<Store, 'db' | 'hotQuery'>,
  query: { where(condition: RawBuilder<SqlBool>): { compile(): { sql: string } } },
  column: string,
): (values: readonly unknown[], leading: readonly unknown[]) => Promise<Row[]> {
  const matchAny = anyOf(store.db, column);
  const reads = new Map<number, (parameters: readonly unknown[]) => Promise<Row[]>>();
  return (values, leading) => {
    const match = matchAny(values);
    let read = reads.get(match.key);
    if (read === undefined) {
      read = store.hotQuery<Row>(query.where(match.condition()).compile().sql);
      reads.set(match.key, read);
    }
    return read([...leading, ...match.parameters]);
  };
}
