// Crash durability: tokend is SIGKILLed in the middle of a burst of token creations and restarted on the
// same database. Every token whose 200 reached the client must still authenticate: an acknowledged
// token is a committed row. The database must then pass its own integrity check.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import { DIALECTS } from '../helpers/dialects.ts';
import type { Backend } from '../helpers/dialects.ts';
import { createMigratedDatabase } from '../helpers/databases.ts';
import { http, startTokend, type TokendProcess } from '../helpers/real-server.ts';
import { within } from '../helpers/waiting.ts';
import { seedUsers, type SeedUser } from '../helpers/seed-users.ts';

const WORKERS = 16;
/** Kill once this many tokens were acknowledged, with the other workers' requests still in flight. */
const KILL_AFTER = 150;
/** Upper bound on requests per worker, so the load ends even if the kill never comes. */
const MAX_PER_WORKER = 400;

const ENV = {
  BCRYPT_COST: '4',
  LOGIN_RATE_LIMIT: '1000000000',
  LOGIN_IP_RATE_LIMIT: '1000000000',
  LOG_LEVEL: 'warn',
};

interface LoadResult {
  acknowledged: string[];
  failures: number;
}

/** Creates tokens from WORKERS parallel clients until the process dies; returns the acknowledged secrets. */
async function createUntilKilled(server: TokendProcess, users: SeedUser[]): Promise<LoadResult> {
  const acknowledged: string[] = [];
  let failures = 0;
  let killed = false;
  const worker = async (w: number) => {
    for (let i = 0; i < MAX_PER_WORKER; i++) {
      const user = users[(w + i) % users.length]!;
      try {
        const r = await http({
          port: server.port,
          method: 'POST',
          path: '/api/v1/tokens',
          body: JSON.stringify({ id: user.id, password: user.password, description: `w${w}-${i}` }),
        });
        if (r.status !== 200) throw new Error(`unexpected ${r.status}: ${r.body}`);
        acknowledged.push((JSON.parse(r.body) as { token: string }).token);
        if (!killed && acknowledged.length >= KILL_AFTER) {
          killed = true;
          server.child.kill('SIGKILL');
        }
      } catch (err) {
        if (!killed) throw err;
        failures++;
        return; // the process is gone: connection refused or reset, as expected
      }
    }
  };
  await within(60_000, 'load', Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w))));
  assert.ok(killed, 'the load ended before the kill');
  return { acknowledged, failures };
}

/** A tokend on a fresh `dialect` database, killed (SIGKILL) while creating tokens; what it acknowledged. */
async function killedUnderLoad(t: TestContext, dialect: Backend) {
  const database = await createMigratedDatabase(dialect);
  t.after(() => database.drop());
  const users = await seedUsers(database.config, 4);
  const env = { ...ENV, ...database.env };
  const server = await startTokend(env);
  t.after(() => server.kill());
  const { acknowledged } = await createUntilKilled(server, users);
  const exit = await within(10_000, 'exit after SIGKILL', server.exited);
  return { database, env, acknowledged, exit };
}

async function assertAllAuthenticate(env: Record<string, string>, secrets: string[]) {
  const server = await startTokend(env);
  try {
    let lost = 0;
    const queue = [...secrets];
    const check = async () => {
      for (let secret = queue.pop(); secret !== undefined; secret = queue.pop()) {
        const r = await http({
          port: server.port,
          path: '/api/v1/tokens/self',
          headers: { 'x-ripple-token': secret },
        });
        if (r.status !== 200) lost++;
      }
    };
    await within(60_000, 'checking the tokens', Promise.all(Array.from({ length: 8 }, check)));
    assert.equal(lost, 0, `${lost} of ${secrets.length} acknowledged tokens were lost`);
  } finally {
    await server.kill();
  }
}

describe('crash durability', () => {
  it('SQLite: no acknowledged token is lost to SIGKILL, and the file passes integrity_check', async (t) => {
    const { database, env, acknowledged, exit } = await killedUnderLoad(t, 'sqlite');
    assert.equal(exit.signal, 'SIGKILL');

    // Opening the file replays the WAL, as the restarted server will.
    const path = (database.config as { path: string }).path;
    const file = new DatabaseSync(path);
    try {
      const checks = file
        .prepare('PRAGMA integrity_check')
        .all()
        .map((row) => ({ ...row }));
      assert.deepEqual(checks, [{ integrity_check: 'ok' }]);
      assert.deepEqual(file.prepare('PRAGMA foreign_key_check').all(), []);
      const { n } = file.prepare('SELECT count(*) AS n FROM tokens').get() as { n: number };
      assert.ok(n >= acknowledged.length, `${n} rows for ${acknowledged.length} acknowledged tokens`);
      console.log(`# sqlite: ${acknowledged.length} acknowledged, ${n} rows after the kill`);
    } finally {
      file.close();
    }
    await assertAllAuthenticate(env, acknowledged);
  });

  if (DIALECTS.includes('postgres'))
    it('PostgreSQL: no acknowledged token is lost to SIGKILL, and the indexes pass amcheck', async (t) => {
      const { database, env, acknowledged } = await killedUnderLoad(t, 'postgres');
      await assertAllAuthenticate(env, acknowledged);

      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query('CREATE EXTENSION IF NOT EXISTS amcheck');
        const indexes = await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_index i
             JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
             JOIN pg_am am ON am.oid = c.relam
            WHERE t.relname IN ('tokens', 'users') AND am.amname = 'btree'`,
        );
        assert.ok(indexes.rows.length >= 3, 'expected the tokens and users indexes');
        // heapallindexed: every row of the table is found through each index, and the trees are sound.
        for (const { name } of indexes.rows)
          await client.query('SELECT bt_index_parent_check($1::regclass, true)', [name]);
        const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM tokens');
        assert.ok(rows[0]!.n >= acknowledged.length);
        console.log(`# postgres: ${acknowledged.length} acknowledged, ${rows[0]!.n} rows after the kill`);
      } finally {
        await client.end();
      }
    });

  if (DIALECTS.includes('mysql'))
    it('MariaDB/MySQL: no acknowledged token is lost to SIGKILL, and the tables pass CHECK TABLE', async (t) => {
      const { database, env, acknowledged } = await killedUnderLoad(t, 'mysql');
      await assertAllAuthenticate(env, acknowledged);

      const conn = await createConnection({ uri: database.url });
      try {
        const [checks] = await conn.query('CHECK TABLE tokens, users EXTENDED');
        for (const row of checks as Array<{ Table: string; Msg_type: string; Msg_text: string }>)
          if (row.Msg_type === 'status') assert.equal(row.Msg_text, 'OK', `${row.Table}: ${row.Msg_text}`);
          else assert.notEqual(row.Msg_type, 'error', `${row.Table}: ${row.Msg_text}`);
        const [rows] = await conn.query('SELECT count(*) AS n FROM tokens');
        const n = Number((rows as Array<{ n: number }>)[0]!.n);
        assert.ok(n >= acknowledged.length);
        console.log(`# mysql: ${acknowledged.length} acknowledged, ${n} rows after the kill`);
      } finally {
        await conn.end();
      }
    });
});
