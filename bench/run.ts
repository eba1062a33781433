// The benchmark suite: tokend and its baselines side by side in one run, on loopback.
// Prints one markdown table and writes bench/results.json. See bench/README.md.
//
//   node bench/run.ts [--quick] [--check] [--scenarios 1,4] [--backends sqlite,postgres]
//                     [--seconds N] [--warm-up N] [--connections N] [--profile]
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { openStore, type Dialect, type Store } from '../src/store/database.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/databases.ts';
import { DIALECTS } from '../test/helpers/dialects.ts';
import { alternate, combine, load, loadWithCpu, warmUp, type LoadResult, type LoadSpec } from './load.ts';
import {
  ROOT,
  childrenOf,
  cpuSecondsOf,
  httpRequest,
  peakRssOf,
  resetPeakRss,
  rssOf,
  startServer,
  type Server,
} from './processes.ts';
import { summarise } from './profile.ts';
import {
  BENCH_PASSWORD,
  DEFAULT_SPEC,
  adminTokenId,
  benchSecret,
  hotTokenId,
  seed,
  type SeedSpec,
} from './seed.ts';

// ---------------------------------------------------------------- options

const SCENARIOS = [1, 2, 3, 4, 5, 6, 7, 8] as const;
type ScenarioId = (typeof SCENARIOS)[number];

interface Options {
  quick: boolean;
  check: boolean;
  scenarios: Set<ScenarioId>;
  backends: Dialect[];
  /** Seconds of load per side of each comparison, split over `rounds` alternating runs. */
  seconds: number;
  rounds: number;
  /** Seconds of load each server gets, unmeasured, before its first measured run. */
  warmUpSeconds: number;
  connections: number;
  /** Connections of the token-creation load (scenarios 2 and 3): more than bcrypt's concurrency, so it never idles. */
  createConnections: number;
  /** Verifications tokend runs at once (its BCRYPT_CONCURRENCY, from the environment or the default). */
  bcryptConcurrency: number;
  /** The machine's bcrypt capacity: the ceiling loop keeps this many in flight (every core). */
  machineBcryptSlots: number;
  startRuns: number;
  profile: boolean;
  spec: SeedSpec;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
      scenarios: { type: 'string' },
      backends: { type: 'string' },
      seconds: { type: 'string' },
      'warm-up': { type: 'string' },
      connections: { type: 'string', default: '10' },
      profile: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(readFileSync(join(ROOT, 'bench/README.md'), 'utf8'));
    process.exit(0);
  }
  const list = (raw: string | undefined) =>
    raw === undefined
      ? undefined
      : raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  const scenarios = new Set<ScenarioId>();
  for (const s of list(values.scenarios) ?? SCENARIOS.map(String)) {
    const n = Number(s) as ScenarioId;
    if (!SCENARIOS.includes(n)) throw new Error(`unknown scenario ${JSON.stringify(s)}; choose from 1-8`);
    scenarios.add(n);
  }
  const wantedBackends = list(values.backends);
  let backends: Dialect[];
  if (wantedBackends === undefined) backends = values.quick ? ['sqlite'] : [...DIALECTS];
  else {
    backends = [];
    for (const b of wantedBackends) {
      const dialect = (b === 'mariadb' ? 'mysql' : b) as Dialect;
      if (!['sqlite', 'postgres', 'mysql'].includes(dialect))
        throw new Error(`unknown backend ${JSON.stringify(b)}; choose from sqlite, postgres, mysql`);
      if (!DIALECTS.includes(dialect)) throw new Error(`the ${dialect} server does not answer`);
      backends.push(dialect);
    }
  }
  const seconds = Number(values.seconds ?? (values.quick ? 3 : 10));
  const connections = Number(values.connections);
  // Reads reach their steady figures after ~5 s of load (V8 tiers the request path up meanwhile).
  const warmUpSeconds = Number(values['warm-up'] ?? (values.quick ? 3 : 6));
  // Each read connection has a seeded token of its own (readHeadersOf); 8,000 of them have 4-digit ids.
  if (!(seconds >= 1) || !(warmUpSeconds >= 0) || !Number.isInteger(connections) || connections < 1)
    throw new Error('--seconds must be ≥ 1, --warm-up ≥ 0 and --connections a positive integer');
  if (connections > MAX_READ_CONNECTIONS)
    throw new Error(`--connections may be at most ${MAX_READ_CONNECTIONS} (a seeded token each)`);
  return {
    quick: values.quick,
    check: values.check,
    scenarios,
    backends,
    seconds,
    rounds: values.quick ? 2 : 4,
    warmUpSeconds,
    connections,
    createConnections: 8,
    bcryptConcurrency: loadConfig({ BCRYPT_CONCURRENCY: process.env.BCRYPT_CONCURRENCY }).bcryptConcurrency,
    machineBcryptSlots: availableParallelism(),
    startRuns: values.quick ? 2 : 3,
    profile: values.profile,
    // The listing user holds TOKENS_PER_USER_MAX (1,000) tokens in both modes, so p=20 is the last page.
    spec: values.quick ? { users: 10_000, tokens: 100_000, hotTokens: DEFAULT_SPEC.hotTokens } : DEFAULT_SPEC,
  };
}

// ---------------------------------------------------------------- results

interface Check {
  what: string;
  value: number;
  op: '>=' | '<=';
  limit: number;
  pass: boolean;
}

interface Row {
  /** 0: seeding */
  scenario: ScenarioId | 0;
  title: string;
  backend: Dialect;
  tokend: string;
  baseline: string;
  ratio: number | null;
  /** The lowest and highest ratio of single rounds: how much the machine's noise moved it. */
  ratioRange?: [number, number];
  checks: Check[];
  note?: string;
  figures: Record<string, unknown>;
}

const range = (ratios: number[]): [number, number] => [Math.min(...ratios), Math.max(...ratios)];

const check = (what: string, value: number, op: Check['op'], limit: number): Check => ({
  what,
  value,
  op,
  limit,
  pass: Number.isFinite(value) && (op === '>=' ? value >= limit : value <= limit),
});

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '—';
const ms = (n: number) => `${fmt(n, n < 10 ? 2 : 1)} ms`;
const mb = (bytes: number) => `${fmt(bytes / 2 ** 20, 1)} MB`;
const describeLoad = (r: LoadResult) =>
  `${fmt(r.rps)} req/s, p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}` +
  (r.cpuUsPerRequest !== undefined ? `, ${fmt(r.cpuUsPerRequest)} µs CPU/req` : '') +
  (r.failures > 0 ? `, **${r.failures} failed**` : '');

const progress = (line: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

// ---------------------------------------------------------------- the servers

const SELF_PATH = '/api/v1/tokens/self';
const LIST_PATH = '/api/v1/tokens';
const CREATE_PATH = '/api/v1/tokens';
const FIX_PATH = '/api/v1/tokens/fix_privileges';
/**
 * The tokens that read, one per connection, as distinct clients send distinct tokens (one token shared
 * by every connection would let a batched lookup find one row for all of them). Owned by ordinary users
 * (the listing user holds only TOKENS_PER_USER_MAX); ids of one digit count (2000–9999), so every answer
 * has the size of the one the baseline sends.
 */
const FIRST_READ_TOKEN = 2000;
const MAX_READ_CONNECTIONS = 8000;
const readHeadersOf = (connections: number) =>
  Array.from({ length: connections }, (_, i) => ({ 'x-ripple-token': benchSecret(FIRST_READ_TOKEN + i) }));
const readHeaders = readHeadersOf(1)[0]!;
/** A token of the listing user (user 1, who holds the seeded TOKENS_PER_USER_MAX tokens). */
const listingHeaders = { 'x-ripple-token': benchSecret(hotTokenId(0)) };

function tokendEnv(database: TestDatabase, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // Token creation is measured at full speed; the limiter itself still runs for every attempt.
    LOGIN_RATE_LIMIT: '1000000000',
    LOGIN_IP_RATE_LIMIT: '1000000000',
    // The abuse limit of 10,000 requests per keep-alive connection would answer 503 to the requests the
    // load generator has already sent on a connection being closed (it does not wait for the close);
    // the baseline has no such limit either.
    MAX_REQUESTS_PER_SOCKET: '0',
    WORKERS: '1',
    ...extra,
  };
}

function startTokend(database: TestDatabase, extra: Record<string, string> = {}, nodeOptions: string[] = []) {
  return startServer({
    name: 'tokend',
    // The production entry (`npm start`), which turns on Node's compile cache.
    args: ['bin/tokend.js', 'serve'],
    env: tokendEnv(database, extra),
    readyPath: SELF_PATH,
    nodeOptions,
  });
}

function startBaseline(body: string) {
  return startServer({
    name: 'baseline',
    args: ['bench/baseline.ts'],
    // The same compile cache as tokend's entry, so start-up compares like with like.
    env: {
      BASELINE_PATH: SELF_PATH,
      BASELINE_BODY: body,
      NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
    },
    readyPath: '/ready',
  });
}

async function expectStatus(
  port: number,
  path: string,
  init: Parameters<typeof httpRequest>[2],
  status = 200,
) {
  const answer = await httpRequest(port, path, init);
  if (answer.status !== status)
    throw new Error(
      `${init?.method ?? 'GET'} ${path} answered ${answer.status}, expected ${status}: ${answer.body}`,
    );
  return answer;
}

/** One side of a comparison: a server and the load it gets. */
interface Side {
  server: Server;
  spec: Omit<LoadSpec, 'port' | 'seconds'>;
}

const sliceSeconds = (run: Run) => run.opts.seconds / run.opts.rounds;

/** Warms both sides up, then alternates short runs of each; returns each side's runs combined, and b/a req/s per round. */
async function compareLoads(run: Run, a: Side, b: Side): Promise<[LoadResult, LoadResult, number[]]> {
  const seconds = sliceSeconds(run);
  for (const side of [a, b])
    await warmUp({ ...side.spec, port: side.server.port, seconds: run.opts.warmUpSeconds });
  const cpu = (server: Server) => () => cpuSecondsOf(server.child.pid ?? -1, true);
  const [as, bs] = await alternate(run.opts.rounds, [
    () => loadWithCpu({ ...a.spec, port: a.server.port, seconds }, cpu(a.server)),
    () => loadWithCpu({ ...b.spec, port: b.server.port, seconds }, cpu(b.server)),
  ]);
  return [combine(as!), combine(bs!), bs!.map((r, i) => r.rps / as![i]!.rps)];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
};
const sleep = (msDelay: number) => new Promise((r) => setTimeout(r, msDelay));

// ---------------------------------------------------------------- scenarios

interface Run {
  opts: Options;
  rows: Row[];
  profile?: unknown;
  baselineStart?: { startMs: number; idleRss: number };
}

const readSpec = (run: Run) => ({
  path: SELF_PATH,
  connectionHeaders: readHeadersOf(run.opts.connections),
  connections: run.opts.connections,
});

async function scenarioRead(run: Run, backend: Dialect, tokend: Server) {
  const probe = await expectStatus(tokend.port, SELF_PATH, { headers: readHeaders });
  const baselineServer = await startBaseline(probe.body);
  let t: LoadResult, baseline: LoadResult, rounds: number[];
  try {
    [baseline, t, rounds] = await compareLoads(
      run,
      { server: baselineServer, spec: readSpec(run) },
      { server: tokend, spec: readSpec(run) },
    );
  } finally {
    await baselineServer.stop();
  }
  const ratio = t.rps / baseline.rps;
  const target = backend === 'sqlite' ? 0.6 : backend === 'postgres' ? 0.35 : undefined;
  const checks = [check('no failed requests', t.failures + baseline.failures, '<=', 0)];
  if (target !== undefined) checks.unshift(check('req/s ratio', ratio, '>=', target));
  run.rows.push({
    scenario: 1,
    title: 'authenticated read `GET /tokens/self`',
    backend,
    tokend: describeLoad(t),
    baseline: `bare Fastify, same envelope (${probe.body.length} B): ${describeLoad(baseline)}`,
    ratio,
    ratioRange: range(rounds),
    checks,
    figures: { tokend: t, baseline, bodyBytes: probe.body.length, connections: run.opts.connections },
  });
}

/** tokend's longest event-loop hold since the last scrape (ms), from its metrics; the scrape resets it. */
async function loopDelayMaxMs(port: number): Promise<number> {
  const text = (await expectStatus(port, '/metrics', {})).body;
  const m = /^tokend_event_loop_delay_max_seconds (\S+)$/m.exec(text);
  if (!m?.[1]) throw new Error('tokend_event_loop_delay_max_seconds is missing from /metrics');
  return Number(m[1]) * 1000;
}

async function scenarioListing(run: Run, backend: Dialect, tokend: Server) {
  const page = (p: number) => `${LIST_PATH}?p=${p}&l=50`;
  const last = run.opts.spec.hotTokens / 50;
  for (const p of [1, last]) {
    const answer = await expectStatus(tokend.port, page(p), { headers: listingHeaders });
    const listed = (JSON.parse(answer.body) as { tokens: unknown[] }).tokens.length;
    if (listed !== 50) throw new Error(`page ${p} listed ${listed} tokens, expected 50`);
  }
  const spec = { headers: listingHeaders, connections: run.opts.connections };
  await loopDelayMaxMs(tokend.port); // resets the maximum
  const [first, deep, rounds] = await compareLoads(
    run,
    { server: tokend, spec: { ...spec, path: page(1) } },
    { server: tokend, spec: { ...spec, path: page(last) } },
  );
  const ratio = deep.rps / first.rps;
  const heldMs = await loopDelayMaxMs(tokend.port);
  run.rows.push({
    scenario: 4,
    title: `listing p=${last} vs p=1 (l=50; user with ${fmt(run.opts.spec.hotTokens)} of ${fmt(run.opts.spec.tokens)} tokens)`,
    backend,
    tokend: `p=${last}: ${describeLoad(deep)}`,
    baseline: `p=1: ${describeLoad(first)}`,
    ratio,
    ratioRange: range(rounds),
    checks: [
      check('req/s ratio', ratio, '>=', 0.5),
      check('longest hold of the event loop (ms)', heldMs, '<=', 50),
      check('no failed requests', deep.failures + first.failures, '<=', 0),
    ],
    figures: { firstPage: first, lastPage: deep, lastPageNumber: last, eventLoopHeldMaxMs: heldMs },
  });
}

const createBody = JSON.stringify({ id: 3, password: BENCH_PASSWORD, privileges: 6, description: 'bench' });
const createSpec = (run: Run) => ({
  path: CREATE_PATH,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: createBody,
  connections: run.opts.createConnections,
});

interface Ceiling {
  verifications: number;
  seconds: number;
  perSecond: number;
}

/** The bcrypt loop in its own process (like tokend), started fresh for each round. */
function bcryptCeiling(run: Run, seconds: number): Promise<Ceiling> {
  return new Promise((resolve, reject) => {
    const args = ['bench/bcrypt-ceiling.ts', '--concurrency', String(run.opts.machineBcryptSlots)];
    execFile(
      process.execPath,
      [...args, '--seconds', String(seconds)],
      { cwd: ROOT, encoding: 'utf8' },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout) as Ceiling)),
    );
  });
}

async function scenarioCreate(run: Run, backend: Dialect, tokend: Server) {
  const probe = await expectStatus(tokend.port, CREATE_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: createBody,
  });
  if (!/"token":"[0-9a-f]{32}"/.test(probe.body))
    throw new Error(`token creation gave no token: ${probe.body}`);
  const seconds = sliceSeconds(run);
  await warmUp({ ...createSpec(run), port: tokend.port, seconds: run.opts.warmUpSeconds });
  const [ceilings, creations] = await alternate<Ceiling | LoadResult>(run.opts.rounds, [
    () => bcryptCeiling(run, seconds),
    () => load({ ...createSpec(run), port: tokend.port, seconds }),
  ]);
  const ceilingRuns = ceilings as Ceiling[];
  const verifications = ceilingRuns.reduce((n, c) => n + c.verifications, 0);
  const ceilingSeconds = ceilingRuns.reduce((n, c) => n + c.seconds, 0);
  const ceiling = { verifications, seconds: ceilingSeconds, perSecond: verifications / ceilingSeconds };
  const t = combine(creations as LoadResult[]);
  const ratio = t.rps / ceiling.perSecond;
  const perRound = (creations as LoadResult[]).map((c, i) => c.rps / ceilingRuns[i]!.perSecond);
  run.rows.push({
    scenario: 2,
    title: 'token creation `POST /tokens`',
    backend,
    tokend: describeLoad(t),
    baseline: `bcrypt verify loop, ${run.opts.machineBcryptSlots} in flight (every core; tokend's BCRYPT_CONCURRENCY is ${run.opts.bcryptConcurrency}): ${fmt(ceiling.perSecond, 1)}/s`,
    ratio,
    ratioRange: range(perRound),
    checks: [check('ceiling ratio', ratio, '>=', 0.9), check('no failed requests', t.failures, '<=', 0)],
    figures: {
      tokend: t,
      ceiling,
      connections: run.opts.createConnections,
      bcryptConcurrency: run.opts.bcryptConcurrency,
      machineBcryptSlots: run.opts.machineBcryptSlots,
    },
  });
}

async function scenarioStorm(run: Run, backend: Dialect, tokend: Server) {
  const seconds = sliceSeconds(run);
  const reads = { ...readSpec(run), port: tokend.port, seconds };
  const logins = { ...createSpec(run), port: tokend.port, seconds };
  await warmUp({ ...reads, seconds: run.opts.warmUpSeconds });
  const [alone, storm] = await alternate(run.opts.rounds, [
    () => load(reads).then((r) => [r]),
    () => Promise.all([load(reads), load(logins)]),
  ]);
  const readsAlone = combine(alone!.map((r) => r[0]!));
  const readsInStorm = combine(storm!.map((r) => r[0]!));
  const loginsInStorm = combine(storm!.map((r) => r[1]!));
  const ratio = readsInStorm.p99Ms / readsAlone.p99Ms;
  const perRound = storm!.map((r, i) => r[0]!.p99Ms / alone![i]![0]!.p99Ms);
  run.rows.push({
    scenario: 3,
    title: 'reads during a login storm (p99 of reads)',
    backend,
    tokend: `reads ${describeLoad(readsInStorm)}; logins ${fmt(loginsInStorm.rps, 1)}/s`,
    baseline: `reads alone: ${describeLoad(readsAlone)}`,
    ratio,
    ratioRange: range(perRound),
    checks: [
      check('p99 ratio', ratio, '<=', 3),
      check('no failed requests', readsInStorm.failures + loginsInStorm.failures, '<=', 0),
    ],
    figures: { readsInStorm, loginsInStorm, readsAlone },
  });
}

const FLOOD_ADDRESS = '198.51.100.66';
const OTHER_ADDRESS = '203.0.113.5';
/** Users the flood tries (200 users x 5 attempts, as the attacking review did) and users the other address signs in as. */
const FLOOD_USERS = { first: 100, count: 200 };
const OTHER_USERS = { first: 20, count: 60 };

interface FloodStats {
  sent: number;
  byStatus: Record<string, number>;
}

/**
 * One address sends `total` login attempts for many users (every user FLOOD_USERS.count/total times) as
 * fast as `connections` clients can, each client hanging up after 50 ms: the burst the attacking review
 * sent (200 users x 5 attempts, 1,000 requests in 0.3 s).
 */
async function flood(port: number, connections: number, total: number): Promise<FloodStats> {
  const stats: FloodStats = { sent: 0, byStatus: {} };
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (stats.sent < total) {
        const id = FLOOD_USERS.first + (next++ % FLOOD_USERS.count);
        stats.sent++;
        let status = 'hung up';
        try {
          const r = await fetch(`http://127.0.0.1:${port}${CREATE_PATH}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': FLOOD_ADDRESS },
            body: JSON.stringify({ id, password: next % 2 === 0 ? BENCH_PASSWORD : 'wrong' }),
            signal: AbortSignal.timeout(50),
          });
          status = String(r.status);
          await r.arrayBuffer();
        } catch {
          // the 50 ms were up: the client hung up, as the flood's clients do
        }
        stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
      }
    }),
  );
  return stats;
}

/** The other address signs in every 500 ms until `until` (a different user each time): each latency and status. */
async function otherLogins(port: number, until: number): Promise<Array<{ ms: number; status: number }>> {
  const out: Array<{ ms: number; status: number }> = [];
  for (let i = 0; performance.now() < until; i++) {
    const started = performance.now();
    const r = await httpRequest(port, CREATE_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': OTHER_ADDRESS },
      body: JSON.stringify({ id: OTHER_USERS.first + (i % OTHER_USERS.count), password: BENCH_PASSWORD }),
    });
    out.push({ ms: performance.now() - started, status: r.status });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 500 - (performance.now() - started))));
  }
  return out;
}

/**
 * Scenario 8: a login flood from one address. tokend runs with its default login limits and password
 * queue (LOGIN_RATE_LIMIT, LOGIN_IP_RATE_LIMIT, PASSWORD_QUEUE_MAX) behind a trusted proxy, so that
 * X-Forwarded-For names the flood's and the other client's addresses. Baseline: the same reads, alone.
 */
async function scenarioFlood(run: Run, backend: Dialect, database: TestDatabase) {
  const tokend = await startServer({
    name: 'tokend (default login limits)',
    args: ['bin/tokend.js', 'serve'],
    env: {
      ...tokendEnv(database, { TRUST_PROXY: 'loopback' }),
      LOGIN_RATE_LIMIT: '5',
      LOGIN_IP_RATE_LIMIT: '100',
    },
    readyPath: SELF_PATH,
  });
  try {
    const seconds = Math.max(6, run.opts.seconds);
    const reads = {
      ...readSpec(run),
      port: tokend.port,
      seconds,
      headers: { 'x-forwarded-for': OTHER_ADDRESS },
    };
    await warmUp({ ...reads, seconds: run.opts.warmUpSeconds });
    const alone = await load(reads);
    // Logins alone: the other address's latency with no flood.
    const quiet = await otherLogins(tokend.port, performance.now() + 2000);
    const until = performance.now() + seconds * 1000;
    const [inFlood, floodStats, logins] = await Promise.all([
      load(reads),
      flood(tokend.port, 50, FLOOD_USERS.count * 5),
      otherLogins(tokend.port, until),
    ]);
    const worstLogin = Math.max(...logins.map((l) => l.ms));
    const refused = logins.filter((l) => l.status !== 200).length;
    const ratio = inFlood.p99Ms / alone.p99Ms;
    run.rows.push({
      scenario: 8,
      title: 'login flood (1,000 attempts, 200 users, from one address): another address signs in and reads',
      backend,
      tokend:
        `other address: ${logins.length} sign-ins, slowest ${ms(worstLogin)}, ${refused} not 200; ` +
        `reads ${describeLoad(inFlood)}; flood: ${fmt(floodStats.sent)} attempts (${Object.entries(
          floodStats.byStatus,
        )
          .map(([k, v]) => `${k}: ${fmt(v)}`)
          .join(', ')})`,
      baseline: `no flood: reads ${describeLoad(alone)}; sign-ins slowest ${ms(Math.max(...quiet.map((l) => l.ms)))}`,
      ratio,
      checks: [
        check('read p99 ratio', ratio, '<=', 3),
        check('slowest sign-in of the other address (ms)', worstLogin, '<=', 2000),
        check('sign-ins of the other address not answered 200', refused, '<=', 0),
        check('failed reads', inFlood.failures + alone.failures, '<=', 0),
      ],
      figures: { alone, inFlood, flood: floodStats, logins, quiet },
    });
  } finally {
    await tokend.stop();
  }
}

async function scenarioWorkers(run: Run, backend: Dialect, database: TestDatabase, one: Server) {
  const title = 'scale: `WORKERS=2` vs 1 worker (read req/s)';
  const two = await startTokend(database, { WORKERS: '2' });
  try {
    await sleep(500); // let every worker come up; the first answer may come from the first one ready
    const workers = childrenOf(two.child.pid ?? -1).length;
    if (workers < 2) {
      run.rows.push({
        scenario: 7,
        title,
        backend,
        tokend: 'not measurable yet',
        baseline: '—',
        ratio: null,
        checks: [],
        note: `WORKERS=2 started ${workers} worker processes: src/server.ts does not fork workers yet`,
        figures: { workerProcesses: workers },
      });
      return;
    }
    const [oneWorker, twoWorkers, rounds] = await compareLoads(
      run,
      { server: one, spec: readSpec(run) },
      { server: two, spec: readSpec(run) },
    );
    run.rows.push({
      scenario: 7,
      title,
      backend,
      tokend: `2 workers: ${describeLoad(twoWorkers)}`,
      baseline: `1 worker: ${describeLoad(oneWorker)}`,
      ratio: twoWorkers.rps / oneWorker.rps,
      ratioRange: range(rounds),
      checks: [check('no failed requests', twoWorkers.failures + oneWorker.failures, '<=', 0)],
      note: `${availableParallelism()} cores, shared with the load generator`,
      figures: { twoWorkers, oneWorker, workerProcesses: workers },
    });
  } finally {
    await two.stop();
  }
}

async function scenarioStartup(run: Run, backend: Dialect, database: TestDatabase) {
  const measureStarts = async (start: () => Promise<Server>) => {
    const starts: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < run.opts.startRuns; i++) {
      const server = await start();
      try {
        starts.push(server.startMs);
        await sleep(1000);
        rss.push(rssOf(server.child.pid ?? -1));
      } finally {
        await server.stop();
      }
    }
    return { startMs: median(starts), idleRss: median(rss), starts, rss };
  };
  run.baselineStart ??= await measureStarts(() => startBaseline('{"code":200,"message":"ok"}'));
  const t = await measureStarts(() => startTokend(database));
  const b = run.baselineStart;
  const checks = [];
  if (backend === 'sqlite')
    checks.push(
      check('start-up (ms)', t.startMs, '<=', 1000),
      // Against the bare Fastify app of the same run: what tokend adds to a minimal Fastify server.
      check('idle RSS over bare Fastify (MB)', (t.idleRss - b.idleRss) / 2 ** 20, '<=', 20),
    );
  run.rows.push({
    scenario: 6,
    title: 'start-up to first answered request; idle RSS',
    backend,
    tokend: `${ms(t.startMs)}, ${mb(t.idleRss)}`,
    baseline: `bare Fastify: ${ms(b.startMs)}, ${mb(b.idleRss)}`,
    ratio: t.startMs / b.startMs,
    checks,
    note: `median of ${run.opts.startRuns} starts; migrations checked on a seeded database`,
    figures: { tokend: t, baseline: b },
  });
}

/** Tokens still over their owners' limits: the seeded ones carry ManageBadges (8), which no seeded user may hold. */
async function newestOverLimit(store: Store): Promise<number | undefined> {
  const r = await store.db.executeQuery<{ id: number }>(
    CompiledQuery.raw('SELECT id FROM tokens WHERE (privileges & 8) <> 0 ORDER BY id DESC LIMIT 1'),
  );
  return r.rows[0]?.id;
}

async function countOverLimit(store: Store): Promise<number> {
  const r = await store.db.executeQuery<{ n: number | string }>(
    CompiledQuery.raw('SELECT count(*) AS n FROM tokens WHERE (privileges & 8) <> 0'),
  );
  return Number(r.rows[0]?.n ?? 0);
}

const FIX_DEADLINE_MS = 180_000;

/** The first error tokend logged (a JSON line at level error or above), if any. */
function loggedError(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50) return `tokend logged "${entry.msg}": ${entry.err?.message ?? ''}`.trim();
    } catch {
      // not a log line
    }
  }
  return undefined;
}

async function scenarioFix(run: Run, backend: Dialect, database: TestDatabase, store: Store) {
  const before = await countOverLimit(store);
  const tokend = await startTokend(database);
  try {
    const pid = tokend.child.pid ?? -1;
    await sleep(500);
    const rss0 = rssOf(pid);
    let peakSampled = rss0;
    let kernelPeak = true;
    try {
      resetPeakRss(pid);
    } catch {
      kernelPeak = false;
    }
    const started = performance.now();
    await expectStatus(tokend.port, FIX_PATH, {
      method: 'POST',
      headers: { 'x-ripple-token': benchSecret(adminTokenId(run.opts.spec)) },
    });
    const deadline = started + FIX_DEADLINE_MS;
    let seconds = NaN;
    let failure: string | undefined;
    for (;;) {
      peakSampled = Math.max(peakSampled, rssOf(pid));
      if ((await newestOverLimit(store)) === undefined) {
        seconds = (performance.now() - started) / 1000;
        break;
      }
      failure = loggedError(tokend.output());
      if (failure !== undefined) break;
      if (performance.now() > deadline) {
        failure = `not done after ${FIX_DEADLINE_MS / 1000} s`;
        break;
      }
      await sleep(100);
    }
    const peak = Math.max(peakSampled, kernelPeak ? peakRssOf(pid) : 0);
    const after = await countOverLimit(store);
    const growth = peak - rss0;
    const checks = [check('tokens left over their limits', after, '<=', 0)];
    if (backend === 'sqlite')
      checks.unshift(
        check('wall time (s)', seconds, '<=', 10),
        check('RSS growth (MB)', growth / 2 ** 20, '<=', 50),
      );
    run.rows.push({
      scenario: 5,
      title: `fix_privileges over ${fmt(run.opts.spec.tokens)} tokens of ${fmt(run.opts.spec.users)} users`,
      backend,
      tokend:
        failure === undefined
          ? `${fmt(seconds, 2)} s, RSS +${mb(growth)} (from ${mb(rss0)})`
          : `**failed**: ${failure}; RSS +${mb(growth)}`,
      baseline: `${fmt(before)} tokens over their limits before, ${fmt(after)} after`,
      ratio: null,
      checks,
      note: 'time from the HTTP call until a poll of the database finds no token over its limits',
      figures: {
        seconds,
        rssBefore: rss0,
        peakRss: peak,
        growth,
        kernelPeak,
        overLimitBefore: before,
        overLimitAfter: after,
        failure,
      },
    });
  } finally {
    await tokend.stop();
  }
}

async function profileReads(run: Run, database: TestDatabase) {
  const dir = join(ROOT, 'bench/profiles');
  mkdirSync(dir, { recursive: true });
  const startedAt = Date.now();
  const tokend = await startTokend(database, {}, ['--cpu-prof', '--cpu-prof-dir', dir]);
  try {
    await warmUp({ ...readSpec(run), port: tokend.port, seconds: run.opts.warmUpSeconds });
    await load({ ...readSpec(run), port: tokend.port, seconds: run.opts.seconds });
  } finally {
    await tokend.stop();
  }
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= startedAt)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!file) throw new Error('tokend wrote no CPU profile');
  const summary = summarise(JSON.parse(readFileSync(file, 'utf8')));
  progress(`CPU profile of scenario 1 written to ${file}; top self time:`);
  for (const f of summary.functions.slice(0, 15))
    process.stderr.write(`  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.name}  ${f.where}\n`);
  run.profile = { file, top: summary.functions.slice(0, 30), files: summary.files.slice(0, 20) };
}

// ---------------------------------------------------------------- one backend

async function runBackend(run: Run, backend: Dialect, primary: boolean) {
  const want = (s: ScenarioId) => run.opts.scenarios.has(s);
  progress(`${backend}: creating a database`);
  const database = await createTestDatabase(backend);
  try {
    const store = await openStore(database.config, { poolSize: 2, timeoutMs: 60_000 });
    try {
      progress(
        `${backend}: seeding ${fmt(run.opts.spec.users)} users and ${fmt(run.opts.spec.tokens)} tokens`,
      );
      const seeded = await seed(store, run.opts.spec);
      progress(`${backend}: seeded in ${fmt(seeded.seconds, 1)} s`);
      run.rows.push({
        scenario: 0,
        title: 'seeding (multi-row INSERTs in transactions)',
        backend,
        tokend: `${fmt(seeded.tokens)} tokens + ${fmt(seeded.users)} users in ${fmt(seeded.seconds, 1)} s`,
        baseline: '—',
        ratio: null,
        checks: [],
        figures: { ...seeded },
      });
      if (want(6)) {
        progress(`${backend}: scenario 6 (start-up)`);
        await scenarioStartup(run, backend, database);
      }
      if (want(1) || want(4) || (primary && (want(2) || want(3) || want(7)))) {
        const tokend = await startTokend(database);
        try {
          if (want(1)) {
            progress(`${backend}: scenario 1 (authenticated read)`);
            await scenarioRead(run, backend, tokend);
          }
          if (want(4)) {
            progress(`${backend}: scenario 4 (listing)`);
            await scenarioListing(run, backend, tokend);
          }
          if (primary && want(2)) {
            progress(`${backend}: scenario 2 (token creation)`);
            await scenarioCreate(run, backend, tokend);
          }
          if (primary && want(3)) {
            progress(`${backend}: scenario 3 (reads during a login storm)`);
            await scenarioStorm(run, backend, tokend);
          }
          if (primary && want(7)) {
            progress(`${backend}: scenario 7 (WORKERS=2)`);
            await scenarioWorkers(run, backend, database, tokend);
          }
        } finally {
          await tokend.stop();
        }
      }
      if (primary && want(8)) {
        progress(`${backend}: scenario 8 (login flood)`);
        await scenarioFlood(run, backend, database);
      }
      if (primary && run.opts.profile) {
        progress(`${backend}: profiling scenario 1`);
        await profileReads(run, database);
      }
      if (want(5)) {
        progress(`${backend}: scenario 5 (fix_privileges)`);
        await scenarioFix(run, backend, database, store);
      }
    } finally {
      await store.close();
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------- report

const backendName = (b: Row['backend']) =>
  ({ sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB' })[b];

function describeChecks(row: Row): { target: string; met: string } {
  if (row.checks.length === 0) return { target: 'report', met: '—' };
  const target = row.checks
    .filter((c) => c.what !== 'no failed requests' && c.what !== 'tokens left over their limits')
    .map((c) => `${c.what} ${c.op === '>=' ? '≥' : '≤'} ${c.limit}`)
    .join('; ');
  const met = row.checks.every((c) => c.pass)
    ? 'yes'
    : `**no** (${row.checks
        .filter((c) => !c.pass)
        .map((c) => c.what)
        .join(', ')})`;
  return { target: target || 'report', met };
}

function table(rows: Row[]): string {
  const lines = [
    '| # | scenario | backend | tokend | baseline | ratio | target | met |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const sorted = [...rows].sort(
    (a, b) => a.scenario - b.scenario || BACKEND_ORDER.indexOf(a.backend) - BACKEND_ORDER.indexOf(b.backend),
  );
  for (const row of sorted) {
    const { target, met } = describeChecks(row);
    const ratio =
      row.ratio === null
        ? '—'
        : fmt(row.ratio, 2) +
          (row.ratioRange ? ` (rounds ${row.ratioRange.map((r) => fmt(r, 2)).join('–')})` : '');
    const tokend = row.note ? `${row.tokend} (${row.note})` : row.tokend;
    lines.push(
      `| ${row.scenario || 'seed'} | ${row.title} | ${backendName(row.backend)} | ${tokend} | ${row.baseline} | ${ratio} | ${target} | ${met} |`,
    );
  }
  return lines.join('\n');
}
const BACKEND_ORDER: Row['backend'][] = ['sqlite', 'postgres', 'mysql'];

function gitCommit(): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench'], {
        cwd: ROOT,
        encoding: 'utf8',
      }).trim() !== '';
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}

async function main(): Promise<void> {
  const opts = parseOptions();
  const began = performance.now();
  const meta = {
    startedAt: new Date().toISOString(),
    node: process.version,
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryBytes: totalmem(),
    loadAverageAtStart: loadavg(),
    ...gitCommit(),
    quick: opts.quick,
    secondsPerMeasurement: opts.seconds,
    connections: opts.connections,
    createConnections: opts.createConnections,
    backends: opts.backends,
    scenarios: [...opts.scenarios],
    dataSet: opts.spec,
  };
  progress(
    `node ${meta.node}, ${meta.cores} cores, commit ${meta.commit.slice(0, 10)}${meta.dirty ? ' (+ uncommitted changes)' : ''}; backends ${opts.backends.join(', ')}`,
  );
  const run: Run = { opts, rows: [] };
  for (const [i, backend] of opts.backends.entries()) await runBackend(run, backend, i === 0);

  const markdown = table(run.rows);
  const totalSeconds = (performance.now() - began) / 1000;
  process.stdout.write(
    `\n${markdown}\n\n${meta.cores} cores (${meta.cpu}), node ${meta.node}, commit ${meta.commit.slice(0, 10)}${meta.dirty ? '+' : ''}, ${opts.quick ? 'quick' : 'full'} run, ${fmt(opts.seconds)} s per measurement, ${fmt(totalSeconds)} s in all; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  const failing = run.rows.filter((r) => r.checks.some((c) => !c.pass));
  writeFileSync(
    join(ROOT, 'bench/results.json'),
    `${JSON.stringify({ meta: { ...meta, totalSeconds, loadAverageAtEnd: loadavg() }, rows: run.rows, profile: run.profile, markdown }, null, 2)}\n`,
  );
  progress('wrote bench/results.json');
  if (opts.check && failing.length > 0) {
    process.stderr.write(
      `targets missed: ${failing.map((r) => `scenario ${r.scenario} (${r.backend})`).join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
