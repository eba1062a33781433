// Migrated templates: each backend's migrations run once per machine into a template, and a test's
// database is a copy of it (createMigratedDatabase in databases.ts) instead of 19 migrations per test.
// - SQLite: a migrated file in the temporary directory, copied;
// - PostgreSQL: a database marked IS_TEMPLATE, the source of `CREATE DATABASE … TEMPLATE`;
// - MariaDB/MySQL (and `ripple`, in place on a family database): a schema whose tables, views and
//   triggers are replayed from SHOW CREATE (character sets, collations, foreign keys and AUTO_INCREMENT
//   as the migrations left them) and whose rows are copied with INSERT … SELECT.
// A template's name carries a hash of what decides its contents (every file under src/store/, the
// family's schema file and the helper that reads it): a changed migration makes a new template. Test
// processes running at once build one template once: under a lock on the servers (pg_advisory_lock,
// GET_LOCK), through an atomic rename for the SQLite file.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { migrateDatabase } from '../../src/store/database.ts';
import { MYSQL_URL, POSTGRES_URL } from './dialects.ts';
import { createRippleTables } from './ripple-schema.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every file under `dir`, recursively, in a stable order. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** What decides a template's contents: the store's sources (the migrations among them) and the family's form. */
const TEMPLATE_SOURCES = (): string[] => [
  ...filesUnder(join(ROOT, 'src/store')),
  join(ROOT, 'docs/ripple-schema.sql'),
  join(ROOT, 'test/helpers/ripple-schema.ts'),
];

/** The hash in every template's name (16 hex digits). */
export const TEMPLATE_HASH: string = (() => {
  const hash = createHash('sha256');
  for (const file of TEMPLATE_SOURCES()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
})();

const withDatabase = (url: string, name: string): string => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    made.catch(() => (made = undefined));
    return made;
  };
};

// --- SQLite -------------------------------------------------------------------------------------------

/** The migrated SQLite file tests copy: built under a name of its own, then renamed into place. */
export const sqliteTemplate = once(async (): Promise<string> => {
  const dir = join(tmpdir(), 'tokend-templates');
  const path = join(dir, `sqlite-${TEMPLATE_HASH}.db`);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, 'building-'));
  try {
    const building = join(work, 'tokend.db');
    await migrateDatabase({ kind: 'sqlite', path: building }, { explicit: true });
    // Closed: the write-ahead log is checkpointed into the file, which is all there is to copy.
    renameSync(building, path);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return path;
});

/** A copy of the migrated SQLite file at `path`. */
export async function copySqliteTemplate(path: string): Promise<void> {
  copyFileSync(await sqliteTemplate(), path);
}

// --- PostgreSQL ---------------------------------------------------------------------------------------

/** The advisory lock key of this template's building: a 63-bit number from the hash. */
const pgLockKey = (name: string): string =>
  BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 16)}`)).toString();

/** The migrated PostgreSQL template's name, built (once per machine) when it is not there yet. */
export const postgresTemplate = once(async (): Promise<string> => {
  const name = `tokend_tpl_${TEMPLATE_HASH}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [pgLockKey(name)]);
    const found = await admin.query<{ datistemplate: boolean }>(
      'SELECT datistemplate FROM pg_database WHERE datname = $1',
      [name],
    );
    if (found.rows[0]?.datistemplate === true) return name;
    // A build that died half-way left a database not yet marked as a template: start again.
    if (found.rows.length > 0) await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      await migrateDatabase({ kind: 'postgres', url: withDatabase(POSTGRES_URL, name) }, { explicit: true });
      // Connections refused from now on: CREATE DATABASE … TEMPLATE needs a template nobody is connected to.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
    } catch (err) {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      throw err;
    }
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [pgLockKey(name)]).catch(() => {});
    await admin.end();
  }
});

// --- MariaDB/MySQL ------------------------------------------------------------------------------------

/** A table in a finished MySQL template, left out of the copies: its presence says the build completed. */
const READY_MARK = 'template_ready_mark';

/** How to remake a MySQL template's contents in another database. */
export interface MysqlTemplate {
  name: string;
  charset: string;
  collation: string;
  /** CREATE TABLE statements, then INSERT … SELECT of the rows, then views, then triggers (each with its sql_mode) */
  statements: Array<{ sql: string; sqlMode?: string }>;
  /** The INSERT … SELECT statements alone: what puts the template's rows into a copy again. */
  rows: string[];
}

/** A MySQL identifier quoted. */
export const quote = (identifier: string): string => `\`${identifier.replaceAll('`', '``')}\``;

async function buildMysqlTemplate(name: string, inPlace: boolean): Promise<void> {
  const admin = await createConnection({ uri: MYSQL_URL });
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${quote(name)}`);
    await admin.query(`CREATE DATABASE ${quote(name)}`);
    const url = withDatabase(MYSQL_URL, name);
    try {
      if (inPlace) {
        const connection = await createConnection({ uri: url });
        try {
          await createRippleTables(connection);
        } finally {
          await connection.end();
        }
        await migrateDatabase({ kind: 'mysql', url, schema: 'ripple' }, { explicit: true });
      } else await migrateDatabase({ kind: 'mysql', url }, { explicit: true });
      await admin.query(`CREATE TABLE ${quote(name)}.${quote(READY_MARK)} (id int)`);
    } catch (err) {
      await admin.query(`DROP DATABASE IF EXISTS ${quote(name)}`).catch(() => {});
      throw err;
    }
  } finally {
    await admin.end();
  }
}

/** Reads how to remake the template `name`'s contents. */
async function readMysqlTemplate(admin: Connection, name: string): Promise<MysqlTemplate> {
  const [schemata] = await admin.query<RowDataPacket[]>(
    'SELECT DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation ' +
      'FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?',
    [name],
  );
  const [tables] = await admin.query<RowDataPacket[]>(
    'SELECT TABLE_NAME AS name, TABLE_TYPE AS type FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ' +
      'ORDER BY TABLE_NAME',
    [name],
  );
  const [triggers] = await admin.query<RowDataPacket[]>(
    'SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY ACTION_ORDER, TRIGGER_NAME',
    [name],
  );
  const [routines] = await admin.query<RowDataPacket[]>(
    'SELECT ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?',
    [name],
  );
  if (routines.length > 0)
    throw new Error(`the MySQL template ${name} holds routines, which the copy does not make yet`);
  // The template's own name, wherever SHOW CREATE qualifies an object with it, becomes the copy's.
  const unqualified = (text: string): string => text.replaceAll(`${quote(name)}.`, '');
  const creates: MysqlTemplate['statements'] = [];
  const rows: MysqlTemplate['statements'] = [];
  const views: MysqlTemplate['statements'] = [];
  for (const table of tables as Array<{ name: string; type: string }>) {
    if (table.name === READY_MARK) continue;
    const qualified = `${quote(name)}.${quote(table.name)}`;
    if (table.type === 'VIEW') {
      const [[view]] = await admin.query<RowDataPacket[]>(`SHOW CREATE VIEW ${qualified}`);
      views.push({ sql: unqualified(String(view?.['Create View'])) });
      continue;
    }
    const [[create]] = await admin.query<RowDataPacket[]>(`SHOW CREATE TABLE ${qualified}`);
    creates.push({ sql: unqualified(String(create?.['Create Table'])) });
    const [[count]] = await admin.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${qualified}`);
    if (Number(count?.n) > 0)
      rows.push({ sql: `INSERT INTO ${quote(table.name)} SELECT * FROM ${qualified}` });
  }
  const made: MysqlTemplate['statements'] = [];
  for (const trigger of triggers as Array<{ name: string }>) {
    const [[shown]] = await admin.query<RowDataPacket[]>(
      `SHOW CREATE TRIGGER ${quote(name)}.${quote(trigger.name)}`,
    );
    made.push({
      sql: unqualified(String(shown?.['SQL Original Statement'])),
      sqlMode: String(shown?.sql_mode),
    });
  }
  const schema = schemata[0] as { charset: string; collation: string } | undefined;
  if (schema === undefined) throw new Error(`the MySQL template ${name} is gone`);
  return {
    name,
    charset: schema.charset,
    collation: schema.collation,
    statements: [...creates, ...rows, ...views, ...made],
    rows: rows.map((row) => row.sql),
  };
}

const mysqlTemplateOf = (backend: 'mysql' | 'ripple') =>
  once(async (): Promise<MysqlTemplate> => {
    const name = `tokend_tpl_${TEMPLATE_HASH}_${backend}`;
    const admin = await createConnection({ uri: MYSQL_URL });
    try {
      const [[locked]] = await admin.query<RowDataPacket[]>('SELECT GET_LOCK(?, 300) AS locked', [name]);
      if (Number(locked?.locked) !== 1) throw new Error(`no lock to build the MySQL template ${name}`);
      const [ready] = await admin.query<RowDataPacket[]>(
        'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
        [name, READY_MARK],
      );
      if (ready.length === 0) await buildMysqlTemplate(name, backend === 'ripple');
      return await readMysqlTemplate(admin, name);
    } finally {
      await admin.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => {});
      await admin.end();
    }
  });

const mysqlTemplates = { mysql: mysqlTemplateOf('mysql'), ripple: mysqlTemplateOf('ripple') };

/** The backend's migrated MySQL template, as copyMysqlTemplate copies it. */
export const mysqlTemplate = (backend: 'mysql' | 'ripple'): Promise<MysqlTemplate> =>
  mysqlTemplates[backend]();

/**
 * Creates the database `target` as a copy of the backend's migrated template: the template's character
 * set and collation, its tables, rows, views and triggers.
 */
export async function copyMysqlTemplate(backend: 'mysql' | 'ripple', target: string): Promise<void> {
  const template = await mysqlTemplates[backend]();
  const admin = await createConnection({ uri: MYSQL_URL });
  try {
    await admin.query(
      `CREATE DATABASE ${quote(target)} CHARACTER SET ${template.charset} COLLATE ${template.collation}`,
    );
    await admin.query(`USE ${quote(target)}`);
    await admin.query('SET FOREIGN_KEY_CHECKS = 0');
    const [[mode]] = await admin.query<RowDataPacket[]>('SELECT @@SESSION.sql_mode AS mode');
    for (const { sql, sqlMode } of template.statements) {
      if (sqlMode !== undefined) await admin.query('SET SESSION sql_mode = ?', [sqlMode]);
      await admin.query(sql);
    }
    await admin.query('SET SESSION sql_mode = ?', [String(mode?.mode)]);
  } catch (err) {
    await admin.query(`DROP DATABASE IF EXISTS ${quote(target)}`).catch(() => {});
    throw err;
  } finally {
    await admin.end();
  }
}
