// Which database backends the suite runs against. SQLite always; PostgreSQL and MySQL/MariaDB when they
// answer (TEST_POSTGRES_URL / TEST_MYSQL_URL, defaulting to the local servers). With CI=true a server
// that does not answer fails the run instead of skipping. TEST_DIALECTS=sqlite,postgres narrows the set.
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import type { Dialect } from '../../src/store/database.ts';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const IN_CI = process.env.CI === 'true';

/** Undefined when the dialect's test server answers; else why not. */
export async function answers(dialect: Dialect): Promise<string | undefined> {
  try {
    if (dialect === 'postgres') {
      const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
      await client.connect();
      await client.end();
    } else if (dialect === 'mysql') {
      const conn = await createConnection({ uri: MYSQL_URL, connectTimeout: 2000 });
      await conn.end();
    }
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

const wanted = (process.env.TEST_DIALECTS ?? 'sqlite,postgres,mysql').split(',').map((s) => s.trim());

async function resolveDialects(): Promise<Dialect[]> {
  const out: Dialect[] = [];
  for (const dialect of ['sqlite', 'postgres', 'mysql'] as const) {
    if (!wanted.includes(dialect)) continue;
    const problem = await answers(dialect);
    if (problem === undefined) out.push(dialect);
    else if (IN_CI) throw new Error(`CI=true but the ${dialect} test server does not answer: ${problem}`);
    else process.stderr.write(`# skipping ${dialect} tests: its server does not answer (${problem})\n`);
  }
  return out;
}

/** The backends this run covers. Top-level await: test files loop over it to declare their tests. */
export const DIALECTS: Dialect[] = await resolveDialects();
