// What one request costs, per backend, at tokend's shipped defaults: the inputs of the capacity model
// (bench/capacity-model.ts). Prints a markdown table and writes bench/costs.json.
//
//   node bench/costs.ts [--backends sqlite,postgres,mysql] [--users 20000] [--tokens 60000]
//                       [--seconds 10] [--warm-up 6] [--connections 10] [--logins 200]
//                       [--refreshes 200] [--idle-connections 1000] [--out bench/costs.json]
//
// Each backend gets a fresh database seeded with bench/seed.ts and one tokend (WORKERS=1) with
// REDIS_URL set (a key prefix of its own) and TRUST_PROXY=loopback, so that the logins can come from
// addresses of their own (X-Forwarded-For) and stay under the shipped login limits, as they would behind
// a balancer. It measures, in this order:
// - reads `GET /api/v1/tokens/self`, a seeded token per request drawn from the whole data set: tokend's
//   CPU (the process, its threads included), the database server's (PostgreSQL: the backends connected
//   to the database; MariaDB: the server's process),
//   the load generator's (this process: autocannon runs in it), the statements the database ran
//   (PostgreSQL: the database's transactions in pg_stat_database; MariaDB: the server's Questions),
//   Redis commands (INFO commandstats), RSS under load;
// - logins `POST /api/v1/tokens` by id and password, each by another user from another address: tokend's
//   CPU (bcrypt's worker threads included), the database's, Redis commands;
// - OAuth refresh grants `POST /oauth/token`, one per account: tokend's and the database's CPU;
// - RSS idle, and its growth with N keep-alive connections open and idle;
// - and, before any backend, one bcrypt check at the shipped BCRYPT_COST on one core (its CPU time).
// MariaDB's CPU and Questions and Redis's commands are server-wide: on a machine that other work shares,
// they count its queries too. The figures are for an idle machine; a shared one only checks
// that the script works.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { hashSync, verifySync } from '@node-rs/bcrypt';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { actOutsideRequest } from '../src/auth/security-log.ts';
import { createClient } from '../src/oauth/clients.ts';
import { issueTokenPair } from '../src/oauth/issue.ts';
import { newOAuthSecret, sha256Hex } from '../src/oauth/secrets.ts';
import { openStore, type Store } from '../src/store/database.ts';
import { md5Hex } from '../src/users/passwords.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/databases.ts';
import { DIALECTS, MYSQL_URL, POSTGRES_URL, REDIS_URL } from '../test/helpers/dialects.ts';
import type { BackendCosts, CostsFile } from './capacity-model.ts';
import { load, warmUp, type LoadResult } from './load.ts';
import {
  ROOT,
  cpuSecondsOf,
  cpuSecondsOfProcesses,
  databaseServerProcesses,
  httpRequest,
  rssOf,
  startServer,
  type Server,
} from './processes.ts';
import { BENCH_PASSWORD, benchSecret, seed, type SeedSpec } from './seed.ts';
import {
  SELF_PATH,
  fmt,
  mb,
  progress,
  sleep,
  tokendEnv,
  tokendSettings,
  type Backend,
  type Settings,
} from './support.ts';

// ---------------------------------------------------------------- reads spread over a data set

/**
 * Request n reads seeded token 1 + (n × STRIDE mod tokens): a prime stride (the token count is never a
 * multiple of it) walks every token once before it repeats one, so the lookups spread over the whole
 * index instead of hitting the same few thousand rows.
 */
const STRIDE = 1_000_003;
export const spreadReadHeaders =
  (tokens: number, from = 0) =>
  (n: number): Record<string, string> => ({
    'x-ripple-token': benchSecret(1 + (((from + n) * STRIDE) % tokens)),
  });
/** Where in the walk over the tokens each load starts: apart, so that one does not read what another cached. */
export const WALK_WARM_UP = 0;
export const WALK_CALIBRATION = 1_000_000;
export const WALK_MEASURED = 2_000_000;

// ---------------------------------------------------------------- counters of the servers

/** The statements the database ran so far: PostgreSQL's transactions in this database, MariaDB's Questions. */
export async function databaseStatements(
  backend: Backend,
  database: TestDatabase,
): Promise<number | undefined> {
  if (backend === 'postgres') {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const name = new URL(database.url).pathname.slice(1);
      const r = await client.query<{ n: string }>(
        'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
        [name],
      );
      return Number(r.rows[0]?.n ?? NaN);
    } finally {
      await client.end();
    }
  }
  if (backend === 'mysql' || backend === 'ripple') {
    const c = await createConnection({ uri: MYSQL_URL });
    try {
      const [rows] = await c.query("SHOW GLOBAL STATUS LIKE 'Questions'");
      // this SHOW is one of them
      return Number((rows as Array<{ Value: string }>)[0]?.Value ?? NaN) - 1;
    } finally {
      await c.end();
    }
  }
  return undefined;
}

/**
 * How long a PostgreSQL backend may keep its counts before pg_stat_database shows them (a backend
 * reports them at most once a second, and an idle one within 10 s).
 */
const PG_STATS_DELAY_MS = 11_000;
export const statsSettle = (backend: Backend) => sleep(backend === 'postgres' ? PG_STATS_DELAY_MS : 200);

/** Redis commands the server has run so far (every client's; this INFO not counted). */
export async function redisCommands(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
  return calls - 1;
}

/**
 * The database server's CPU seconds so far: every process of the server (PostgreSQL's backends, those its
 * pools open during a measurement included, and its WAL writer and checkpointer, which the reads' writes
 * of last use keep busy; MariaDB's one process), listed again at each reading. Other work on the server
 * counts too: measure on a server that serves only the bench. SQLite: none (it runs inside tokend).
 */
export async function databaseCpu(backend: Backend, url: string): Promise<() => number> {
  if (backend === 'sqlite') return () => 0;
  const names = databaseServerProcesses(url);
  return () => cpuSecondsOfProcesses(names);
}

// ---------------------------------------------------------------- measuring a read load

export interface ReadTarget {
  port: number;
  pid: number;
}

export interface ReadMeasurement {
  requests: number;
  seconds: number;
  readsPerS: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU seconds per read. */
  tokendCpuPerRead: number;
  dbCpuPerRead: number;
  loadGeneratorCpuPerRead: number;
  /** Busy cores during the load: tokend's processes, the database server's, this process. */
  tokendCores: number;
  dbCores: number;
  loadGeneratorCores: number;
  /** Highest RSS sampled, per tokend process. */
  rssMaxBytes: number[];
}

/**
 * Reads against every target at once (`connections` each, tokens spread over the data set), for
 * `seconds`; the CPU of tokend, the database server and this process over the same span.
 */
export async function measureReads(
  targets: readonly ReadTarget[],
  {
    connections,
    seconds,
    tokens,
    dbCpu,
    from = WALK_MEASURED,
  }: { connections: number; seconds: number; tokens: number; dbCpu: () => number; from?: number },
): Promise<ReadMeasurement> {
  const tokendCpu = () => targets.reduce((sum, t) => sum + cpuSecondsOf(t.pid, true), 0);
  const rssMaxBytes = targets.map((t) => rssOf(t.pid));
  const sampler = setInterval(() => {
    targets.forEach((t, i) => (rssMaxBytes[i] = Math.max(rssMaxBytes[i]!, rssOf(t.pid))));
  }, 250);
  const t0 = tokendCpu();
  const db0 = dbCpu();
  const own0 = process.cpuUsage();
  const began = performance.now();
  let results: LoadResult[];
  try {
    // Each target's connections read a share of the data set of their own.
    results = await Promise.all(
      targets.map((t, i) => {
        const headers = spreadReadHeaders(tokens, from);
        return load({
          port: t.port,
          path: SELF_PATH,
          connections,
          seconds,
          requestHeaders: (n) => headers(n * targets.length + i),
        });
      }),
    );
  } finally {
    clearInterval(sampler);
  }
  const wall = (performance.now() - began) / 1000;
  const own = process.cpuUsage(own0);
  const tokendS = tokendCpu() - t0;
  const dbS = dbCpu() - db0;
  const ownS = (own.user + own.system) / 1e6;
  const requests = results.reduce((n, r) => n + r.requests, 0);
  const per = Math.max(1, requests);
  const p = (f: (r: LoadResult) => number) => Math.max(...results.map(f));
  return {
    requests,
    seconds: wall,
    readsPerS: requests / wall,
    failures: results.reduce((n, r) => n + r.failures, 0),
    p50Ms: p((r) => r.p50Ms),
    p99Ms: p((r) => r.p99Ms),
    tokendCpuPerRead: tokendS / per,
    dbCpuPerRead: dbS / per,
    loadGeneratorCpuPerRead: ownS / per,
    tokendCores: tokendS / wall,
    dbCores: dbS / wall,
    loadGeneratorCores: ownS / wall,
    rssMaxBytes,
  };
}

// ---------------------------------------------------------------- driving single requests

/** Sends `count` requests, `concurrency` at a time, request i made by `make(i)`; returns the answers' statuses. */
async function drive(
  port: number,
  count: number,
  concurrency: number,
  make: (i: number) => { path: string; method: string; headers: Record<string, string>; body: string },
): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const { path, ...init } = make(next++);
        let status = 'error';
        try {
          status = String((await httpRequest(port, path, { ...init, timeoutMs: 30_000 })).status);
        } catch {
          // counted as an error
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

const allOk = (statuses: Record<string, number>, what: string) => {
  const bad = Object.entries(statuses).filter(([s]) => s !== '200');
  if (bad.length > 0) throw new Error(`${what}: answers other than 200: ${JSON.stringify(statuses)}`);
};

/** A distinct documentation-range-free address for request i (X-Forwarded-For). */
const addressOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/**
 * `count` requests made by `make`, with the CPU of tokend and of the database server, and the Redis
 * commands, they cost each.
 */
async function measureRequests(
  tokend: Server,
  dbCpu: () => number,
  redis: Redis,
  count: number,
  concurrency: number,
  what: string,
  make: Parameters<typeof drive>[3],
) {
  const pid = tokend.child.pid ?? -1;
  const redis0 = await redisCommands(redis);
  const t0 = cpuSecondsOf(pid, true);
  const db0 = dbCpu();
  const began = performance.now();
  allOk(await drive(tokend.port, count, concurrency, make), what);
  const seconds = (performance.now() - began) / 1000;
  const tokendS = cpuSecondsOf(pid, true) - t0;
  const dbS = dbCpu() - db0;
  // the Redis commands of the last requests' background work (none expected) have had their time
  await sleep(200);
  const redisOps = (await redisCommands(redis)) - redis0 - 1; // the first INFO
  return {
    count,
    seconds,
    perS: count / seconds,
    tokendCpu: tokendS / count,
    dbCpu: dbS / count,
    redisOps: redisOps / count,
  };
}

// ---------------------------------------------------------------- idle connections

/** RSS growth of a process with `n` keep-alive connections open, each having had one read answered. */
async function rssPerIdleConnections(
  tokend: Server,
  n: number,
  tokens: number,
): Promise<{ before: number; after: number }> {
  const pid = tokend.child.pid ?? -1;
  await sleep(1000);
  const before = rssOf(pid);
  const headers = spreadReadHeaders(tokens);
  const sockets: Socket[] = [];
  try {
    // 50 at a time, each kept open once its answer came back
    for (let at = 0; at < n; at += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, n - at) }, (_, k) => {
          const token = headers(at + k)['x-ripple-token']!;
          return new Promise<void>((resolve, reject) => {
            const socket = connect(tokend.port, '127.0.0.1');
            sockets.push(socket);
            socket.once('error', reject);
            socket.once('data', () => resolve());
            socket.write(`GET ${SELF_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Ripple-Token: ${token}\r\n\r\n`);
          });
        }),
      );
    }
    await sleep(1000);
    return { before, after: rssOf(pid) };
  } finally {
    for (const s of sockets) s.destroy();
  }
}

// ---------------------------------------------------------------- bcrypt

/**
 * One bcrypt check at `cost`, one at a time on this thread (one core), the mean of `n`: its CPU seconds
 * (what the model counts; steady on a shared machine) and its wall time.
 */
function bcryptCheck(cost: number, n = 20): { cpuSeconds: number; wallSeconds: number } {
  const digest = md5Hex(BENCH_PASSWORD);
  const stored = hashSync(digest, cost);
  verifySync(digest, stored);
  const cpu0 = process.threadCpuUsage();
  const began = performance.now();
  for (let i = 0; i < n; i++) if (!verifySync(digest, stored)) throw new Error('bcrypt check failed');
  const cpu = process.threadCpuUsage(cpu0);
  return {
    cpuSeconds: (cpu.user + cpu.system) / 1e6 / n,
    wallSeconds: (performance.now() - began) / 1000 / n,
  };
}

// ---------------------------------------------------------------- one backend

interface Run {
  spec: SeedSpec;
  seconds: number;
  warmUpSeconds: number;
  connections: number;
  logins: number;
  refreshes: number;
  idleConnections: number;
  bcryptSecondsPerCheck: number;
}

/** Users taken by the logins and the refreshes: ordinary seeded users, none used twice. */
const FIRST_USER = 10;

async function measureBackend(run: Run, backend: Backend): Promise<BackendCosts & Record<string, unknown>> {
  progress(
    `${backend}: creating and seeding a database (${fmt(run.spec.users)} users, ${fmt(run.spec.tokens)} tokens)`,
  );
  const database = await createTestDatabase(backend);
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let store: Store | undefined;
  let tokend: Server | undefined;
  try {
    store = await openStore(database.config, { poolSize: 2, timeoutMs: 60_000 });
    await seed(store, run.spec);
    const settings: Settings = tokendSettings(
      { logLevel: undefined },
      { REDIS_URL, REDIS_KEY_PREFIX: `bench-costs-${process.pid}-${backend}:`, TRUST_PROXY: 'loopback' },
    );
    tokend = await startServer({
      name: `tokend (${backend})`,
      args: ['bin/tokend.js', 'serve'],
      env: tokendEnv(database, settings),
      readyPath: SELF_PATH,
    });
    const pid = tokend.child.pid ?? -1;
    await sleep(1000);
    const rssIdleBytes = rssOf(pid);

    progress(`${backend}: reads`);
    const readSpec = { connections: run.connections, tokens: run.spec.tokens };
    const headers = spreadReadHeaders(run.spec.tokens);
    await warmUp({
      port: tokend.port,
      path: SELF_PATH,
      connections: run.connections,
      seconds: run.warmUpSeconds,
      requestHeaders: headers,
    });
    await statsSettle(backend);
    const statements0 = await databaseStatements(backend, database);
    const redis0 = await redisCommands(redis);
    const reads = await measureReads([{ port: tokend.port, pid }], {
      ...readSpec,
      seconds: run.seconds,
      dbCpu: await databaseCpu(backend, database.url),
    });
    await statsSettle(backend);
    const statements1 = await databaseStatements(backend, database);
    const redisReads = (await redisCommands(redis)) - redis0 - 1;
    if (reads.failures > 0) throw new Error(`${backend}: ${reads.failures} reads failed`);

    progress(`${backend}: ${fmt(run.logins)} logins`);
    const loginBody = (user: number) =>
      JSON.stringify({ id: user, password: BENCH_PASSWORD, privileges: 6, description: 'capacity' });
    const login = (offset: number) => (i: number) => ({
      path: '/api/v1/tokens',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': addressOf(offset + i) },
      body: loginBody(FIRST_USER + offset + i),
    });
    // Enough at once to keep every bcrypt slot (BCRYPT_CONCURRENCY: the cores) busy.
    const concurrency = 2 * availableParallelism();
    const warmLogins = Math.min(20, run.logins);
    allOk(await drive(tokend.port, warmLogins, concurrency, login(0)), 'logins');
    const logins = await measureRequests(
      tokend,
      await databaseCpu(backend, database.url),
      redis,
      run.logins,
      concurrency,
      'logins',
      login(warmLogins),
    );

    progress(`${backend}: ${fmt(run.refreshes)} OAuth refresh grants`);
    const now = Math.floor(Date.now() / 1000);
    const firstRefresher = FIRST_USER + warmLogins + run.logins;
    const { client } = await createClient(
      store.db,
      {
        name: 'Capacity',
        ownerId: firstRefresher,
        avatar: '',
        redirectUris: ['https://capacity.example/cb'],
        public: true,
        now,
      },
      actOutsideRequest('cli', now),
    );
    const refreshTokens: string[] = [];
    for (let i = 0; i < run.refreshes; i++) {
      const issued = await issueTokenPair(
        store.db,
        {
          clientId: client.id,
          userId: firstRefresher + i,
          scope: 'read_confidential',
          family: sha256Hex(newOAuthSecret()),
        },
        now,
      );
      refreshTokens.push(issued.refresh_token!);
    }
    const refreshes = await measureRequests(
      tokend,
      await databaseCpu(backend, database.url),
      redis,
      run.refreshes,
      concurrency,
      'refreshes',
      (i) => ({
        path: '/oauth/token',
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': addressOf(i) },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshTokens[i]!,
          client_id: client.id,
        }).toString(),
      }),
    );

    progress(`${backend}: ${fmt(run.idleConnections)} idle keep-alive connections`);
    const idle = await rssPerIdleConnections(tokend, run.idleConnections, run.spec.tokens);

    const queries =
      statements0 === undefined || statements1 === undefined
        ? 0
        : (statements1 - statements0) / reads.requests;
    return {
      backend,
      tokendCpuPerRead: reads.tokendCpuPerRead,
      dbCpuPerRead: reads.dbCpuPerRead,
      queriesPerRead: queries,
      redisOpsPerRead: redisReads / reads.requests,
      tokendCpuPerLogin: logins.tokendCpu,
      dbCpuPerLogin: logins.dbCpu,
      redisOpsPerLogin: logins.redisOps,
      tokendCpuPerRefresh: refreshes.tokendCpu,
      dbCpuPerRefresh: refreshes.dbCpu,
      bcryptSecondsPerCheck: run.bcryptSecondsPerCheck,
      loadGeneratorCpuPerRead: reads.loadGeneratorCpuPerRead,
      rssIdleBytes,
      rssLoadBytes: reads.rssMaxBytes[0]!,
      rssPer1000ConnectionsBytes: ((idle.after - idle.before) * 1000) / run.idleConnections,
      settings,
      reads,
      logins,
      refreshes,
      idleConnections: { count: run.idleConnections, ...idle },
      statementsCounted:
        backend === 'postgres'
          ? 'transactions of this database'
          : backend === 'sqlite'
            ? 'none (in process)'
            : "the server's Questions",
    };
  } finally {
    await tokend?.stop();
    await store?.close();
    redis.disconnect();
    await database.drop();
  }
}

// ---------------------------------------------------------------- report

const us = (s: number) => `${fmt(s * 1e6)} µs`;

export function costsTable(backends: readonly BackendCosts[]): string {
  const rows: Array<[string, (c: BackendCosts) => string]> = [
    ['tokend CPU per read', (c) => us(c.tokendCpuPerRead)],
    ['database CPU per read', (c) => us(c.dbCpuPerRead)],
    ['database statements per read', (c) => fmt(c.queriesPerRead, 3)],
    ['Redis commands per read', (c) => fmt(c.redisOpsPerRead, 3)],
    ['tokend CPU per login (bcrypt included)', (c) => us(c.tokendCpuPerLogin)],
    ['database CPU per login', (c) => us(c.dbCpuPerLogin)],
    ['Redis commands per login', (c) => fmt(c.redisOpsPerLogin, 1)],
    ['tokend CPU per OAuth refresh', (c) => us(c.tokendCpuPerRefresh ?? NaN)],
    ['database CPU per OAuth refresh', (c) => us(c.dbCpuPerRefresh ?? NaN)],
    ['bcrypt check (shipped BCRYPT_COST, one core)', (c) => us(c.bcryptSecondsPerCheck)],
    ['load generator CPU per read (rig only)', (c) => us(c.loadGeneratorCpuPerRead)],
    ['RSS idle', (c) => mb(c.rssIdleBytes)],
    ['RSS under read load', (c) => mb(c.rssLoadBytes)],
    ['RSS per 1,000 idle connections', (c) => mb(c.rssPer1000ConnectionsBytes)],
  ];
  return [
    `| input | ${backends.map((b) => b.backend).join(' | ')} |`,
    `| --- | ${backends.map(() => '---').join(' | ')} |`,
    ...rows.map(([name, f]) => `| ${name} | ${backends.map(f).join(' | ')} |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      backends: { type: 'string' },
      users: { type: 'string', default: '20000' },
      tokens: { type: 'string', default: '60000' },
      seconds: { type: 'string', default: '10' },
      'warm-up': { type: 'string', default: '6' },
      connections: { type: 'string', default: '10' },
      logins: { type: 'string', default: '200' },
      refreshes: { type: 'string', default: '200' },
      'idle-connections': { type: 'string', default: '1000' },
      out: { type: 'string', default: join(ROOT, 'bench/costs.json') },
    },
  });
  const backends = (values.backends?.split(',').map((b) => (b.trim() === 'mariadb' ? 'mysql' : b.trim())) ??
    DIALECTS.filter((d) => d !== 'ripple')) as Backend[];
  for (const b of backends)
    if (!DIALECTS.includes(b)) throw new Error(`backend ${b} is unknown or its server does not answer`);
  const users = Number(values.users);
  const run: Run = {
    spec: { users, tokens: Number(values.tokens), hotTokens: 1000 },
    seconds: Number(values.seconds),
    warmUpSeconds: Number(values['warm-up']),
    connections: Number(values.connections),
    logins: Number(values.logins),
    refreshes: Number(values.refreshes),
    idleConnections: Number(values['idle-connections']),
    bcryptSecondsPerCheck: 0,
  };
  if (FIRST_USER + 20 + run.logins + run.refreshes > users)
    throw new Error('--users must exceed the logins and refreshes, each of which takes a user of its own');
  const bcryptCost = loadConfig({}).bcryptCost;
  const bcrypt = bcryptCheck(bcryptCost);
  run.bcryptSecondsPerCheck = bcrypt.cpuSeconds;
  progress(
    `one bcrypt check at cost ${bcryptCost}: ${fmt(bcrypt.cpuSeconds * 1000, 1)} ms of CPU, ${fmt(bcrypt.wallSeconds * 1000, 1)} ms of wall time`,
  );
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = loadavg();
  const measured = [];
  for (const backend of backends) measured.push(await measureBackend(run, backend));
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  const file: CostsFile = {
    meta: {
      startedAt,
      cores: availableParallelism(),
      cpu: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      commit,
      bcryptCost,
      bcryptWallSecondsPerCheck: bcrypt.wallSeconds,
      loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
      options: { ...run, bcryptSecondsPerCheck: undefined },
    },
    backends: measured,
  };
  writeFileSync(values.out, `${JSON.stringify(file, null, 2)}\n`);
  process.stdout.write(`\n${costsTable(measured)}\n\nwrote ${values.out}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench costs: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
