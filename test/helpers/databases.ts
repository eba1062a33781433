// A database of a test's own:
// - createTestDatabase: a fresh, empty one (a temp file for SQLite, a new database on the PostgreSQL/MySQL
//   server); for the in-place backend (`ripple`) a new database of the Ripple family's form on the MySQL
//   server, with tokend's additions applied as `tokend migrate` applies them;
// - createMigratedDatabase: one with every migration already applied, copied from a template made once
//   per machine (templates.ts), for the tests whose subject is not migrating; on a server, a copy the
//   test before it in the same process gave back and that was reset (recycling.ts), when there is one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import type { DatabaseConfig } from '../../src/config.ts';
import { MYSQL_URL, POSTGRES_URL, type Backend } from './dialects.ts';
import { createRippleTables } from './ripple-schema.ts';
import { mysqlFresh, postgresFresh, resetMysql, resetPostgres, type MysqlFresh } from './recycling.ts';
import { copyMysqlTemplate, copySqliteTemplate, mysqlTemplate, postgresTemplate } from './templates.ts';

export interface TestDatabase {
  config: DatabaseConfig;
  /** The URL form, for DATABASE_URL of a child process. */
  url: string;
  /** The variables that name this database to a child process: DATABASE_URL, and DATABASE_SCHEMA in place. */
  env: Record<string, string>;
  /**
   * Drops the database: at once for SQLite's file; on a server, in the background (dropLater). A migrated
   * copy on a server is given back instead, for the next test of the process (takeCopy).
   */
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Drops of server databases, one after another in the background: a test's end does not wait for its
 * database to go (DROP DATABASE takes a few hundred milliseconds on a busy server), the next test starts
 * at once, and the process exits once every drop is done (their connections keep it alive until then).
 */
let drops: Promise<void> = Promise.resolve();
function dropLater(name: string, drop: () => Promise<void>): Promise<void> {
  drops = drops.then(drop).catch((err: unknown) => {
    process.stderr.write(`# could not drop the test database ${name}: ${String(err)}\n`);
  });
  return Promise.resolve();
}

const uniqueName = () => `tokend_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

/**
 * A new database on the MySQL/MariaDB server: empty (the server's default character set), or made by
 * `create` under the name given.
 */
async function createMysqlDatabase(
  create?: (name: string) => Promise<void>,
): Promise<TestDatabase & { config: { kind: 'mysql' } }> {
  const name = uniqueName();
  if (create) await create(name);
  else {
    const admin = await createConnection({ uri: MYSQL_URL });
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
  }
  const url = withDatabase(MYSQL_URL, name);
  return {
    config: { kind: 'mysql', url },
    url,
    env: { DATABASE_URL: url },
    drop: () =>
      dropLater(name, async () => {
        const c = await createConnection({ uri: MYSQL_URL });
        await c.query(`DROP DATABASE IF EXISTS ${name}`);
        await c.end();
      }),
  };
}

/**
 * A new database of the Ripple family's form (latin1, its `users` and `tokens` tables from
 * docs/ripple-schema.sql), as the family's programs have it: tokend's additions not applied.
 */
export async function createFamilyDatabase(): Promise<TestDatabase & { config: { kind: 'mysql' } }> {
  const database = await createMysqlDatabase();
  const connection = await createConnection({ uri: database.url });
  try {
    await createRippleTables(connection);
  } catch (err) {
    await database.drop();
    throw err;
  } finally {
    await connection.end();
  }
  return database;
}

/** A new database on the PostgreSQL server: empty, or a copy of the template named. */
async function createPostgresDatabase(template?: string): Promise<TestDatabase> {
  const name = uniqueName();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${template}`}`);
  await admin.end();
  const url = withDatabase(POSTGRES_URL, name);
  return {
    config: { kind: 'postgres', url },
    url,
    env: { DATABASE_URL: url },
    drop: () =>
      dropLater(name, async () => {
        const c = new pg.Client({ connectionString: POSTGRES_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      }),
  };
}

/** A new SQLite file in a directory of its own: empty, or a copy of the migrated template. */
async function createSqliteDatabase(migrated: boolean): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'tokend-test-'));
  const path = join(dir, 'tokend.db');
  try {
    if (migrated) await copySqliteTemplate(path);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    config: { kind: 'sqlite', path },
    url: `sqlite:${path}`,
    env: { DATABASE_URL: `sqlite:${path}` },
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** In place: a copy of the migrated family template (the family's form, `tokend migrate` applied). */
async function createInPlaceDatabase(): Promise<TestDatabase> {
  const family = await createMysqlDatabase((name) => copyMysqlTemplate('ripple', name));
  const config = { ...family.config, schema: 'ripple' as const };
  return { ...family, config, env: { ...family.env, DATABASE_SCHEMA: 'ripple' } };
}

/**
 * A new database: empty on sqlite/postgres/mysql (the app or the CLI migrates it, as on a first start);
 * in place (`ripple`) of the family's form with `tokend migrate` applied.
 */
export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'sqlite') return createSqliteDatabase(false);
  if (backend === 'postgres') return createPostgresDatabase();
  if (backend === 'mysql') return createMysqlDatabase();
  return createInPlaceDatabase();
}

/**
 * A new database with every migration applied, copied from the backend's template (templates.ts): for
 * tests whose subject is not migrating. Its contents are what migrating an empty database gives.
 */
export async function createMigratedDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'sqlite') return createSqliteDatabase(true);
  return takeCopy(backend);
}

/** A new copy of a server backend's template. */
async function copyOfTemplate(backend: Exclude<Backend, 'sqlite'>): Promise<TestDatabase> {
  if (backend === 'postgres') return createPostgresDatabase(await postgresTemplate());
  if (backend === 'mysql') return createMysqlDatabase((name) => copyMysqlTemplate('mysql', name));
  return createInPlaceDatabase();
}

type ServerBackend = Exclude<Backend, 'sqlite'>;

/** A copy of a template, and what it is checked against when given back (recycling.ts). */
interface Copy {
  backend: ServerBackend;
  database: TestDatabase;
  /** undefined: its fresh state could not be read, and it is dropped when given back */
  fresh: string | MysqlFresh | undefined;
}

/** Copies given back and reset, ready for the next test of this process. */
const recycled = new Map<ServerBackend, Copy[]>();
/** The resets under way, one after another: a test that wants a copy waits for them (a few ms each). */
let resets: Promise<void> = Promise.resolve();

/** A copy of the backend's template: one a test of this process gave back, or a new one. */
async function takeCopy(backend: ServerBackend): Promise<TestDatabase> {
  await resets;
  const copy = recycled.get(backend)?.pop() ?? (await newCopy(backend));
  let given = false;
  return {
    ...copy.database,
    drop: async () => {
      if (given) return;
      given = true;
      // A reset that fails drops the copy instead; the next test then makes a new one.
      resets = resets.then(() => giveBack(copy)).catch(() => copy.database.drop());
    },
  };
}

/** A new copy, and its fresh state. */
async function newCopy(backend: ServerBackend): Promise<Copy> {
  const database = await copyOfTemplate(backend);
  const fresh = backend === 'postgres' ? await postgresFresh(database.url) : await mysqlFresh(database.url);
  return { backend, database, fresh };
}

/** Resets a copy a test is done with and keeps it; drops it when its schema changed or the reset failed. */
async function giveBack(copy: Copy): Promise<void> {
  const { backend, database, fresh } = copy;
  const reset =
    fresh === undefined
      ? false
      : typeof fresh === 'string'
        ? await resetPostgres(database.url, fresh)
        : await resetMysql(database.url, (await mysqlTemplate(backend as 'mysql' | 'ripple')).rows, fresh);
  if (!reset) return database.drop();
  const list = recycled.get(backend) ?? [];
  list.push(copy);
  recycled.set(backend, list);
}

process.on('beforeExit', () => {
  void resets.then(() => {
    for (const list of recycled.values()) for (const copy of list.splice(0)) void copy.database.drop();
  });
});
