// The floor of scenario 1: a bare Fastify app (the same Fastify, no plugins) doing only the work an
// authenticated read `GET /api/v1/tokens/self` cannot do without, on the database tokend uses:
//
// - the secret from X-Ripple-Token, its SHA-256 hex and its MD5 form (tokend looks for both: the MD5 form
//   is `md5:` and the hex in tokend's own tables, the hex alone in place on a Ripple-family database);
// - the lookups of one turn of the event loop sharing ONE query, dispatched on setImmediate, at most 64
//   secrets a query (DataLoader, as src/auth/credential-lookup.ts batches them): the very statement
//   tokend's lookup prepares (same columns, join, expiry condition and token_hash index; on SQLite and
//   MySQL the IN-list padded to a power of two, on PostgreSQL `= any($2)`), through the same drivers
//   (node:sqlite on a query-only connection, pg, mysql2 prepared statements);
// - the token's privileges limited by its owner's (src/auth/privileges.ts, the one rule);
// - the envelope tokend answers, and one access line per request through pino, written asynchronously
//   to stdout as tokend's logger writes it (src/http/logging.ts logDestination).
//
// It handles the bench's cases only (API tokens; no sessions, bearer tokens, expiry writes or last-use
// bookkeeping), and answers 404 with tokend's envelope when no token matches.
//
//   PORT=… DATABASE_URL=sqlite:/tmp/bench.db [DATABASE_SCHEMA=ripple] node bench/floor.ts
import { hash } from 'node:crypto';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import DataLoader from 'dataloader';
import Fastify from 'fastify';
import pino from 'pino';
import { effectivePrivileges } from '../src/auth/privileges.ts';

const SELF_PATH = '/api/v1/tokens/self';
/** Most secrets one query carries (credential-lookup.ts LOOKUP_BATCH_MAX). */
const BATCH_MAX = 64;
/** The lookup pool's size on PostgreSQL (src/store/database.ts LOOKUP_POOL_MAX) and tokend's pool on MySQL. */
const PG_POOL = 4;
const MYSQL_POOL = 10;

const url = process.env.DATABASE_URL ?? '';
const inPlace = process.env.DATABASE_SCHEMA === 'ripple';
const port = Number(process.env.PORT ?? 0);

/**
 * A row as an array, in the order of the statement's columns (lookupSql): every driver hands rows over so
 * (node:sqlite setReturnArrays, pg rowMode 'array', mysql2 rowsAsArray), with no column name to set per row.
 */
type Row = unknown[];
const ID = 0;
const USER_ID = 1;
const PRIVILEGES = 2;
const DESCRIPTION = 3;
const USERNAME = 10;
const USER_PRIVILEGES = 11;
const TOKEN_HASH = 13;

/** The columns tokend's lookup reads, in its order; `q` quotes an identifier. */
function lookupSql(q: (name: string) => string, tokens: string, users: string, hashes: string, now: string) {
  const t = (c: string) => `${q(tokens)}.${q(c)}`;
  const u = (c: string) => `${q(users)}.${q(c)}`;
  const columns = [
    ...['id', 'user_id', 'privileges', 'description', 'last_updated', 'session', 'password_at'].map(t),
    ...['created_at', 'password_fingerprint', 'private'].map(t),
    u('username'),
    `${u('privileges')} as ${q('user_privileges')}`,
    u('password_hash'),
    t('token_hash'),
  ];
  return (
    `select ${columns.join(', ')} from ${q(tokens)} inner join ${q(users)} on ${u('id')} = ${t('user_id')} ` +
    `where (${t('expires_at')} is null or ${t('expires_at')} > ${now}) and ${t('token_hash')} ${hashes}`
  );
}

/** The lookup's rows for a batch of stored forms, at `now` (Unix seconds). */
type Read = (forms: string[], now: number) => Promise<Row[]>;

/** The next power of two of n: tokend pads an IN-list to it, so a connection prepares few texts. */
const padded = (values: string[]): string[] => {
  let size = 1;
  while (size < values.length) size *= 2;
  const out = [...values];
  while (out.length < size) out.push(values[values.length - 1]!);
  return out;
};
const placeholders = (n: number) => `in (${Array.from({ length: n }, () => '?').join(', ')})`;

function sqliteRead(path: string): Read {
  const db = new DatabaseSync(path, { timeout: 5000 });
  db.exec('PRAGMA query_only = ON;');
  const quote = (name: string) => `"${name}"`;
  const statements = new Map<number, ReturnType<DatabaseSync['prepare']>>();
  return async (forms, now) => {
    const values = padded(forms);
    let stmt = statements.get(values.length);
    if (stmt === undefined) {
      stmt = db.prepare(lookupSql(quote, 'tokens', 'users', placeholders(values.length), '?'));
      stmt.setReturnArrays(true);
      statements.set(values.length, stmt);
    }
    return stmt.all(now, ...(values as SQLInputValue[])) as unknown as Row[];
  };
}

async function postgresRead(connectionString: string): Promise<Read> {
  const { default: pg } = await import('pg');
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
  const pool = new pg.Pool({
    connectionString,
    types,
    max: PG_POOL,
    // As tokend's lookup pool: one plan per session (src/store/drivers/postgres.ts).
    onConnect: (client) => client.query('SET plan_cache_mode = force_generic_plan').then(() => undefined),
  });
  const text = lookupSql((n) => `"${n}"`, 'tokens', 'users', '= any($2)', '$1');
  return async (forms, now) =>
    (await pool.query<Row>({ name: 'floor_lookup', text, values: [now, forms], rowMode: 'array' })).rows;
}

async function mysqlRead(uri: string): Promise<Read> {
  const { createPool } = await import('mysql2/promise');
  const pool = createPool({
    uri,
    connectionLimit: MYSQL_POOL,
    supportBigNumbers: true,
    enableKeepAlive: true,
  });
  // In place tokend reads the family's tables through its two views (src/store/in-place-migrations.ts).
  const [tokens, users] = inPlace ? ['tokend_tokens', 'tokend_users'] : ['tokens', 'users'];
  const texts = new Map<number, string>();
  return async (forms, now) => {
    const values = padded(forms);
    let sql = texts.get(values.length);
    if (sql === undefined) {
      sql = lookupSql((n) => `\`${n}\``, tokens, users, placeholders(values.length), '?');
      texts.set(values.length, sql);
    }
    const [rows] = await pool.execute({ sql, rowsAsArray: true }, [now, ...values]);
    return rows as Row[];
  };
}

const read: Read = url.startsWith('sqlite:')
  ? sqliteRead(url.slice('sqlite:'.length).replace(/^\/\//, ''))
  : url.startsWith('postgres')
    ? await postgresRead(url)
    : await mysqlRead(url);

/** The stored MD5 form of a secret: the hex in place, `md5:` and the hex in tokend's own tables. */
const md5Form = (secret: string) => (inPlace ? '' : 'md5:') + hash('md5', secret, 'hex');

interface Found {
  row: Row;
  /** the time of the lookup: tokend answers it as last_updated (the time of this use) */
  at: number;
}

const loader = new DataLoader<string, Found | undefined>(
  async (secrets) => {
    const sha = secrets.map((s) => hash('sha256', s, 'hex'));
    const md5 = secrets.map(md5Form);
    const at = Math.floor(Date.now() / 1000);
    const rows = await read([...sha, ...md5], at);
    const byHash = new Map(rows.map((row) => [row[TOKEN_HASH] as string, row]));
    return secrets.map((_, i) => {
      const row = byHash.get(sha[i]!) ?? byHash.get(md5[i]!);
      return row && { row, at };
    });
  },
  { cache: false, maxBatchSize: BATCH_MAX, batchScheduleFn: (dispatch) => void setImmediate(dispatch) },
);

const log = pino(
  { level: 'info' },
  pino.destination({ dest: 1, sync: false, minLength: 2048, maxWrite: 4096, periodicFlush: 1000 }),
);

const app = Fastify();
// A response schema, as tokend's route has: Fastify's compiled serialiser, which also writes a number
// for an id a driver hands over as a string (MariaDB's views in place).
const integer = { type: 'integer' } as const;
const answer = {
  type: 'object',
  properties: {
    code: integer,
    message: { type: 'string' },
    id: integer,
    privileges: integer,
    description: { type: 'string' },
    last_updated: integer,
    user_id: integer,
    username: { type: 'string' },
  },
} as const;
const notFound = {
  type: 'object',
  properties: { code: integer, message: { type: 'string' } },
} as const;
app.get(SELF_PATH, { schema: { response: { 200: answer, 404: notFound } } }, async (request, reply) => {
  const header = request.headers['x-ripple-token'];
  const secret = Array.isArray(header) ? header[0] : header;
  const found = secret ? await loader.load(secret) : undefined;
  if (found === undefined)
    return reply.code(404).send({ code: 404, message: 'No token is being used in this request.' });
  const { row, at } = found;
  return {
    code: 200,
    message: 'ok',
    id: row[ID],
    privileges: effectivePrivileges(Number(row[PRIVILEGES]), Number(row[USER_PRIVILEGES])),
    description: row[DESCRIPTION],
    last_updated: at,
    user_id: row[USER_ID],
    username: row[USERNAME],
  };
});
app.addHook('onResponse', async (request, reply) => {
  log.info(
    {
      reqId: request.id,
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
      remoteAddress: request.ip,
    },
    'request completed',
  );
});
app.get('/ready', async () => ({ code: 200, message: 'ok' }));
process.once('SIGTERM', () => void app.close().then(() => log.flush(() => process.exit(0))));
await app.listen({ host: '127.0.0.1', port });
