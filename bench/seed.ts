// Seeds a benchmark data set: many users and tokens, inserted with multi-row INSERTs inside transactions.
// Secrets are derived from the token id, so the bench can authenticate as any seeded token.
//
//   node bench/seed.ts --database-url sqlite:/tmp/bench.db [--users 100000] [--tokens 1000000]
//                      [--hot-tokens 10000] [--json]
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { hash } from '@node-rs/bcrypt';
import { CompiledQuery } from 'kysely';
import { parseDatabaseUrl } from '../src/config.ts';
import { openStore, type Db, type Dialect, type Store } from '../src/store/database.ts';
import { dialectOf } from '../src/store/sql-dialect.ts';
import { TokenPrivilege, UserPrivilege } from '../src/auth/privileges.ts';
import { md5Hex } from '../src/users/passwords.ts';
import { storedSecretHash } from '../src/auth/secret.ts';

export interface SeedSpec {
  users: number;
  tokens: number;
  /** Tokens owned by the listing user (user 1); the rest are spread evenly over users 3.. (user 2 has one). */
  hotTokens: number;
}

/** The listing user holds TOKENS_PER_USER_MAX's default, 1,000 tokens (seeding itself is not capped). */
export const DEFAULT_SPEC: SeedSpec = { users: 100_000, tokens: 1_000_000, hotTokens: 1_000 };

/** Every seeded user has this password (bcrypt cost 10, like the server's default). */
export const BENCH_PASSWORD = 'bench-password';
export const BENCH_BCRYPT_COST = 10;

/** User 1 owns the hot tokens (listing); user 2 is the admin that may call fix_privileges. */
export const HOT_USER_ID = 1;
export const ADMIN_USER_ID = 2;

const NORMAL = UserPrivilege.UserPublic | UserPrivilege.UserNormal;
const ADMIN =
  NORMAL |
  UserPrivilege.AdminAccessRAP |
  UserPrivilege.AdminManageUsers |
  UserPrivilege.AdminBanUsers |
  UserPrivilege.AdminManageServer;
/** Within the limits of every seeded user. */
const WITHIN = TokenPrivilege.ReadConfidential | TokenPrivilege.Write;
/** ManageBadges needs AdminManageBadges, which no seeded user holds: such a token is over its limits. */
const OVER = WITHIN | TokenPrivilege.ManageBadges;
const ADMIN_TOKEN_PRIVILEGES = WITHIN | TokenPrivilege.ManageUser | TokenPrivilege.APIMeta;

/** The secret of seeded token `id`: 32 lower-case hex characters, a pure function of the id. */
export const benchSecret = (id: number): string =>
  createHash('sha256').update(`tokend-bench-${id}`).digest('hex').slice(0, 32);

/** Seeded token ids: 1..hotTokens belong to the hot user; the admin's fix_privileges token comes next. */
export const hotTokenId = (n = 0): number => 1 + n;
export const adminTokenId = (spec: SeedSpec): number => spec.hotTokens + 1;

/** Owner of seeded token `id` (ids are 1-based and dense). */
export function ownerOf(spec: SeedSpec, id: number): number {
  if (id <= spec.hotTokens) return HOT_USER_ID;
  if (id === adminTokenId(spec)) return ADMIN_USER_ID;
  // The rest go to users 3.. in contiguous runs, so the (user_id, private, id) index grows in order.
  const rest = spec.tokens - spec.hotTokens - 1;
  return 3 + Math.floor(((id - spec.hotTokens - 2) * (spec.users - 2)) / rest);
}

/** Stored privileges of seeded token `id`: every third token is over its owner's limits. */
export function privilegesOf(spec: SeedSpec, id: number): number {
  if (id === adminTokenId(spec)) return ADMIN_TOKEN_PRIVILEGES;
  return id % 3 === 0 ? OVER : WITHIN;
}

export const isOverLimit = (spec: SeedSpec, id: number): boolean => privilegesOf(spec, id) === OVER;

/** A column and its PostgreSQL type (for unnest). */
type Column = readonly [name: string, pgType: string];

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(',')})`;
  return Array.from({ length: rows }, () => row).join(',');
}

/**
 * One INSERT per batch of rows. SQLite and MySQL get a multi-row VALUES list (the SQL text repeats, so
 * SQLite reuses its prepared statement); PostgreSQL gets one array per column through unnest, which it
 * parses far faster than thousands of separate parameters.
 */
async function insertBatches(
  db: Db,
  dialect: Dialect,
  table: string,
  columns: readonly Column[],
  count: number,
  row: (index: number) => unknown[],
): Promise<void> {
  const names = columns.map(([name]) => name).join(', ');
  // 7 parameters per row stays far below every dialect's parameter limit (SQLite's is 32766).
  const batchRows = dialect === 'postgres' ? 10_000 : 1000;
  const statement = (rows: number) =>
    dialect === 'postgres'
      ? `INSERT INTO ${table} (${names}) SELECT * FROM unnest(${columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})`
      : `INSERT INTO ${table} (${names}) VALUES ${placeholders(rows, columns.length)}`;
  const parameters = (first: number, rows: number): unknown[] => {
    if (dialect !== 'postgres') {
      const flat: unknown[] = [];
      for (let i = 0; i < rows; i++) flat.push(...row(first + i));
      return flat;
    }
    const byColumn = columns.map(() => [] as unknown[]);
    for (let i = 0; i < rows; i++) row(first + i).forEach((value, c) => byColumn[c]!.push(value));
    return byColumn;
  };
  const full = statement(batchRows);
  // A few batches per transaction: one commit (and fsync) per ~50k rows.
  const batchesPerTransaction = Math.max(1, Math.floor(50_000 / batchRows));
  for (let start = 0; start < count;) {
    await db.transaction().execute(async (trx) => {
      for (let b = 0; b < batchesPerTransaction && start < count; b++) {
        const rows = Math.min(batchRows, count - start);
        const text = rows === batchRows ? full : statement(rows);
        await trx.executeQuery(CompiledQuery.raw(text, parameters(start, rows)));
        start += rows;
      }
    });
  }
}

export interface SeedResult {
  users: number;
  tokens: number;
  overLimit: number;
  seconds: number;
}

/** Seeds an empty, migrated store. */
export async function seed(store: Store, spec: SeedSpec = DEFAULT_SPEC): Promise<SeedResult> {
  if (spec.users < 3 || spec.tokens < spec.hotTokens + 2)
    throw new Error('a bench data set needs at least 3 users and hotTokens + 2 tokens');
  const started = performance.now();
  const { db } = store;
  const dialect = dialectOf(db);
  const passwordHash = await hash(md5Hex(BENCH_PASSWORD), BENCH_BCRYPT_COST);
  const now = Math.floor(Date.now() / 1000);
  if (dialect === 'sqlite') {
    // The unique index on random hashes outgrows SQLite's default 2 MB page cache at once.
    await db.executeQuery(CompiledQuery.raw('PRAGMA cache_size = -262144'));
  }

  // In place (DATABASE_SCHEMA=ripple) the rows go into the family's own tables, in its columns and
  // types, as its website writes a user (`salt` '', an email, the registration time: columns without a
  // default): `user` as text, the token in `token` in the form the family and tokend both write a public
  // API token there (the MD5 hex of its secret), the password as version 2.
  const family = store.layout.schema === 'ripple';
  const storedHash = storedSecretHash(store.layout, { private: false });
  await insertBatches(
    db,
    dialect,
    'users',
    family
      ? [
          ['id', 'int'],
          ['username', 'text'],
          ['username_safe', 'text'],
          ['privileges', 'bigint'],
          ['password_md5', 'text'],
          ['password_version', 'int'],
          ['register_datetime', 'bigint'],
          ['email', 'text'],
          ['salt', 'text'],
        ]
      : [
          ['id', 'int'],
          ['username', 'text'],
          ['username_safe', 'text'],
          ['privileges', 'bigint'],
          ['password_hash', 'text'],
          ['password_version', 'int'],
          ['created_at', 'bigint'],
        ],
    spec.users,
    (i) => {
      const id = i + 1;
      const name = `bench_user_${id}`;
      const row = [id, name, name, id === ADMIN_USER_ID ? ADMIN : NORMAL, passwordHash, 2, now];
      return family ? [...row, `${name}@bench.invalid`, ''] : row;
    },
  );
  let overLimit = 0;
  await insertBatches(
    db,
    dialect,
    'tokens',
    [
      ['id', 'int'],
      [family ? '`user`' : 'user_id', 'int'],
      ['privileges', 'bigint'],
      ['description', 'text'],
      [family ? 'token' : 'token_hash', 'text'],
      ['private', 'smallint'],
      ['last_updated', 'bigint'],
    ],
    spec.tokens,
    (i) => {
      const id = i + 1;
      const privileges = privilegesOf(spec, id);
      if (privileges === OVER) overLimit++;
      const owner = ownerOf(spec, id);
      return [
        id,
        family ? String(owner) : owner,
        privileges,
        `bench ${id}`,
        storedHash(benchSecret(id)),
        0,
        now,
      ];
    },
  );
  if (dialect === 'postgres') {
    // Explicit ids do not move identity sequences; later inserts must not collide with seeded rows.
    for (const table of ['users', 'tokens'])
      await db.executeQuery(
        CompiledQuery.raw(
          `SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`,
        ),
      );
    await db.executeQuery(CompiledQuery.raw('ANALYZE'));
  } else if (dialect === 'mysql') {
    await db.executeQuery(CompiledQuery.raw('ANALYZE TABLE users, tokens'));
  } else {
    await db.executeQuery(CompiledQuery.raw('ANALYZE'));
  }
  return {
    users: spec.users,
    tokens: spec.tokens,
    overLimit,
    seconds: (performance.now() - started) / 1000,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' },
      users: { type: 'string', default: String(DEFAULT_SPEC.users) },
      tokens: { type: 'string', default: String(DEFAULT_SPEC.tokens) },
      'hot-tokens': { type: 'string', default: String(DEFAULT_SPEC.hotTokens) },
      json: { type: 'boolean', default: false },
    },
  });
  const url = values['database-url'] ?? process.env.DATABASE_URL;
  if (!url) throw new Error('give --database-url (or DATABASE_URL) of an empty database');
  const spec: SeedSpec = {
    users: Number(values.users),
    tokens: Number(values.tokens),
    hotTokens: Number(values['hot-tokens']),
  };
  for (const [k, v] of Object.entries(spec))
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${k} must be a non-negative integer`);
  const store = await openStore(parseDatabaseUrl(url), { poolSize: 2, timeoutMs: 60_000 });
  try {
    const result = await seed(store, spec);
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else
      process.stdout.write(
        `seeded ${result.users} users and ${result.tokens} tokens (${result.overLimit} over their owners' privileges) in ${result.seconds.toFixed(1)} s\n`,
      );
  } finally {
    await store.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench seed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
