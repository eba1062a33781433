// Which database backends the suite runs against. SQLite always; PostgreSQL and MySQL/MariaDB when they
// answer (TEST_POSTGRES_URL / TEST_MYSQL_URL, defaulting to the local servers); and `ripple`, tokend in
// place (DATABASE_SCHEMA=ripple) on a Ripple-family database made on the MariaDB server (latin1, the
// family's tables from docs/ripple-schema.sql, tokend's additions applied as `tokend migrate` applies
// them), when MariaDB answers. With CI=true a server that does not answer fails the run instead of
// skipping. TEST_DIALECTS=sqlite,postgres narrows the set (default: all four).
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import type { Dialect } from '../../src/store/database.ts';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const IN_CI = process.env.CI === 'true';

/**
 * A backend of the test matrix: one of the store's dialects with tokend's own tables, or `ripple`, tokend
 * in place on a Ripple-family database (a MySQL/MariaDB database of the family's form).
 */
export type Backend = Dialect | 'ripple';

export const BACKENDS: readonly Backend[] = ['sqlite', 'postgres', 'mysql', 'ripple'];

/** The dialect a backend's database speaks: the in-place backend's is MySQL/MariaDB. */
export const dialectOf = (backend: Backend): Dialect => (backend === 'ripple' ? 'mysql' : backend);

/**
 * How long a test server may take to answer the first time a process asks. A run of many test files in
 * one process (test/run.ts) loads them all before their tests start: a file that asks while the others
 * load waits its turn on a busy event loop, so this is generous; it is spent only when a server is down.
 */
const ANSWER_TIMEOUT_MS = 15_000;

/** Whether each dialect's server answered, asked once per process. */
const answered = new Map<Dialect, Promise<string | undefined>>();

/** Undefined when the backend's test server answers (asked once per process); else why not. */
export function answers(backend: Backend): Promise<string | undefined> {
  const dialect = dialectOf(backend);
  let answer = answered.get(dialect);
  if (answer === undefined) {
    answer = ask(dialect);
    answered.set(dialect, answer);
  }
  return answer;
}

async function ask(dialect: Dialect): Promise<string | undefined> {
  try {
    if (dialect === 'postgres') {
      const client = new pg.Client({
        connectionString: POSTGRES_URL,
        connectionTimeoutMillis: ANSWER_TIMEOUT_MS,
      });
      await client.connect();
      await client.end();
    } else if (dialect === 'mysql') {
      const conn = await createConnection({ uri: MYSQL_URL, connectTimeout: ANSWER_TIMEOUT_MS });
      await conn.end();
    }
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const wanted = (process.env.TEST_DIALECTS ?? BACKENDS.join(',')).split(',').map((s) => s.trim());

async function resolveDialects(): Promise<Backend[]> {
  const out: Backend[] = [];
  for (const backend of BACKENDS) {
    if (!wanted.includes(backend)) continue;
    const problem = await answers(backend);
    if (problem === undefined) out.push(backend);
    else if (IN_CI) throw new Error(`CI=true but the ${backend} test server does not answer: ${problem}`);
    else process.stderr.write(`# skipping ${backend} tests: its server does not answer (${problem})\n`);
  }
  return out;
}

/**
 * The backends this run covers (sqlite, postgres, mysql, ripple). Top-level await: test files loop over
 * it to declare their tests.
 */
export const DIALECTS: Backend[] = await resolveDialects();
