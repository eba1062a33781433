// Migrated server databases used again within one test process. Making a copy of a template and dropping
// it costs the server ~0.2 s of CPU on PostgreSQL and ~0.1 s on MariaDB, per test; putting a database a
// test is done with back into the template's state costs a few milliseconds. So a database a test gives
// back is reset and kept for the next test of the same process, unless its form changed:
// - its schema (tables, columns, indexes, constraints, views, triggers, routines, character set) must be
//   what it was when it was copied, told by a fingerprint taken then and again before the reset; a test
//   that migrated down, altered a table or added one gets its database dropped, as before;
// - every row goes, the template's own rows (the migrations' bookkeeping, the outbox's state) come back,
//   and every counter (PostgreSQL's sequences, MariaDB's AUTO_INCREMENT) starts where the template's does;
// - whoever is still connected to it (a child process's pool) is disconnected first.
// The databases left over are dropped when the process has nothing else to do (databases.ts).
import pg from 'pg';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { quote } from './templates.ts';

// --- PostgreSQL ---------------------------------------------------------------------------------------

/** One line per object of the database's schema, every schema but the system's; hashed. */
const PG_FINGERPRINT = `
select md5(coalesce(string_agg(line, E'\\n' order by line), '')) as fingerprint from (
  select 'n ' || n.nspname as line from pg_namespace n
  union all
  select 'r ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' ||
         coalesce(pg_get_viewdef(c.oid), '')
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
  union all
  select 'a ' || n.nspname || '.' || c.relname || '.' || a.attname || ' ' || a.attnum || ' ' ||
         format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' ||
         coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
   where a.attnum > 0 and not a.attisdropped
     and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
  union all
  select 'i ' || pg_get_indexdef(i.indexrelid)
    from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
   where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
  union all
  select 'k ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(k.oid)
    from pg_constraint k join pg_namespace n on n.oid = k.connamespace
   where n.nspname not in ('pg_catalog', 'information_schema')
  union all
  select 'g ' || pg_get_triggerdef(t.oid) from pg_trigger t where not t.tgisinternal
  union all
  select 'f ' || n.nspname || '.' || p.proname || ' ' || md5(p.prosrc)
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
   where n.nspname not in ('pg_catalog', 'information_schema')
  union all
  select 's ' || array_to_string(setconfig, ',') from pg_db_role_setting
   where setdatabase = (select oid from pg_database where datname = current_database())
) parts`;

/** What a fresh copy of the PostgreSQL template holds beyond its schema: its rows and its counters. */
interface PostgresContents {
  /** every table, schema-qualified and quoted */
  tables: string[];
  /** the rows of the tables that have any, as json_agg gives them */
  rows: Array<{ table: string; json: string }>;
  /** every sequence, with setval's arguments for where it stands */
  sequences: Array<{ sequence: string; value: string; called: boolean }>;
}

async function pgFingerprint(client: pg.Client): Promise<string> {
  const result = await client.query<{ fingerprint: string }>(PG_FINGERPRINT);
  return result.rows[0]!.fingerprint;
}

async function readPostgresContents(client: pg.Client): Promise<PostgresContents> {
  const tables = (
    await client.query<{ name: string }>(
      `select format('%I.%I', schemaname, tablename) as name from pg_tables
        where schemaname not in ('pg_catalog', 'information_schema') order by 1`,
    )
  ).rows.map((row) => row.name);
  const rows: PostgresContents['rows'] = [];
  for (const table of tables) {
    const found = await client.query<{ json: string | null }>(
      `select json_agg(t)::text as json from ${table} t`,
    );
    const json = found.rows[0]?.json;
    if (json !== null && json !== undefined) rows.push({ table, json });
  }
  const sequences = (
    await client.query<{ sequence: string; value: string; called: boolean }>(
      `select format('%I.%I', schemaname, sequencename) as sequence,
              coalesce(last_value, start_value)::text as value, last_value is not null as called
         from pg_sequences where schemaname not in ('pg_catalog', 'information_schema')`,
    )
  ).rows;
  return { tables, rows, sequences };
}

/** Read once per process from the first fresh copy: every copy of the template holds the same. */
let postgresContents: Promise<PostgresContents> | undefined;

/**
 * What to check a PostgreSQL copy against when it is given back: its fingerprint now, while fresh (and,
 * the first time in this process, the template's rows and counters). Undefined: it cannot be recycled.
 */
export async function postgresFresh(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    postgresContents ??= readPostgresContents(client);
    await postgresContents;
    return await pgFingerprint(client);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Puts a PostgreSQL copy back into the template's state; false when its schema is not the one it had. */
export async function resetPostgres(url: string, fingerprint: string): Promise<boolean> {
  if (postgresContents === undefined) return false;
  const contents = await postgresContents;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    if ((await pgFingerprint(client)) !== fingerprint) return false;
    const literal = (text: string) => client.escapeLiteral(text);
    // Foreign keys and triggers are not enforced within (session_replication_role): every row goes anyway.
    const statements = [
      'begin',
      'set local session_replication_role = replica',
      ...contents.tables.map((table) => `delete from ${table}`),
      ...contents.rows.map(
        ({ table, json }) =>
          `insert into ${table} select * from json_populate_recordset(null::${table}, ${literal(json)})`,
      ),
      ...contents.sequences.map(
        ({ sequence, value, called }) => `select setval(${literal(sequence)}, ${value}, ${called})`,
      ),
      'commit',
    ];
    await client.query(statements.join(';\n'));
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

// --- MariaDB/MySQL ------------------------------------------------------------------------------------

/** One line per object of the current database's schema, its own name taken out of view texts; hashed. */
const MYSQL_FINGERPRINT = `
SELECT MD5(IFNULL(GROUP_CONCAT(line ORDER BY line SEPARATOR '\\n'), '')) AS fingerprint FROM (
  SELECT CONCAT_WS(' ', 's', DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME) AS line
    FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 't', TABLE_NAME, TABLE_TYPE, IFNULL(ENGINE, '-'), IFNULL(TABLE_COLLATION, '-'))
    FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'c', TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, IS_NULLABLE,
      IFNULL(COLUMN_DEFAULT, '-'), EXTRA, IFNULL(COLLATION_NAME, '-'))
    FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'i', TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, IFNULL(SUB_PART, '-'))
    FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'k', CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE)
    FROM information_schema.TABLE_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'f', CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME, UPDATE_RULE, DELETE_RULE)
    FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'v', TABLE_NAME, REPLACE(VIEW_DEFINITION, DATABASE(), ''))
    FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'g', TRIGGER_NAME, EVENT_OBJECT_TABLE, ACTION_TIMING, EVENT_MANIPULATION,
      REPLACE(ACTION_STATEMENT, DATABASE(), ''))
    FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()
  UNION ALL SELECT CONCAT_WS(' ', 'p', ROUTINE_TYPE, ROUTINE_NAME)
    FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()
) parts`;

async function mysqlFingerprint(connection: Connection): Promise<string> {
  const [rows] = await connection.query<RowDataPacket[]>(MYSQL_FINGERPRINT);
  return String(rows[0]?.fingerprint);
}

/** The base tables of the current database and where each one's AUTO_INCREMENT stands. */
async function mysqlTables(connection: Connection): Promise<Array<{ name: string; next: number | null }>> {
  const [rows] = await connection.query<RowDataPacket[]>(
    "SELECT TABLE_NAME AS name, AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'",
  );
  return rows.map((row) => ({ name: String(row.name), next: row.next === null ? null : Number(row.next) }));
}

/** What a MariaDB copy is checked and reset against: its fingerprint and its tables' counters when fresh. */
export interface MysqlFresh {
  fingerprint: string;
  /** AUTO_INCREMENT of each base table as copied */
  counters: Map<string, number | null>;
}

/** Reads a fresh MariaDB copy's fingerprint and counters; undefined: it cannot be recycled. */
export async function mysqlFresh(url: string): Promise<MysqlFresh | undefined> {
  let connection: Connection | undefined;
  try {
    connection = await createConnection({ uri: url });
    const fingerprint = await mysqlFingerprint(connection);
    const counters = new Map((await mysqlTables(connection)).map((t) => [t.name, t.next]));
    return { fingerprint, counters };
  } catch {
    return undefined;
  } finally {
    await connection?.end().catch(() => {});
  }
}

/**
 * Puts a MariaDB copy back into its template's state: every row deleted, then `rows` run (the template's
 * INSERT … SELECT of its own rows, as when the copy was made). False when its schema is not the one it had.
 */
export async function resetMysql(url: string, rows: readonly string[], fresh: MysqlFresh): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await createConnection({ uri: url, multipleStatements: true });
    const [others] = await connection.query<RowDataPacket[]>(
      'SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()',
    );
    for (const { id } of others) await connection.query(`KILL CONNECTION ${Number(id)}`).catch(() => {});
    if ((await mysqlFingerprint(connection)) !== fresh.fingerprint) return false;
    const statements = ['SET FOREIGN_KEY_CHECKS = 0'];
    for (const table of fresh.counters.keys()) statements.push(`DELETE FROM ${quote(table)}`);
    statements.push(...rows);
    statements.push('SET FOREIGN_KEY_CHECKS = 1');
    await connection.query(statements.join(';\n'));
    const counters: string[] = [];
    for (const { name, next } of await mysqlTables(connection)) {
      const wanted = fresh.counters.get(name);
      if (wanted !== undefined && wanted !== null && next !== wanted)
        counters.push(`ALTER TABLE ${quote(name)} AUTO_INCREMENT = ${wanted}`);
    }
    if (counters.length > 0) await connection.query(counters.join(';\n'));
    return true;
  } catch {
    return false;
  } finally {
    await connection?.end().catch(() => {});
  }
}
