// What the scenarios of the benchmark suite (bench/scenarios/) share: the run's options, the row each
// scenario reports, formatting, tokend and the bare Fastify baseline as servers, and the alternating
// comparison of two loads. The driver is bench/run.ts; see bench/README.md.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dialect, Store } from '../src/store/database.ts';
import { knownVariables } from '../src/unknown-variables.ts';
import type { TestDatabase } from '../test/helpers/databases.ts';
import { alternate, combine, loadWithCpu, warmUp, type LoadResult, type LoadSpec } from './load.ts';
import {
  cpuSecondsOf,
  cpuSecondsOfProcesses,
  databaseServerProcesses,
  httpRequest,
  startServer,
  type Server,
} from './processes.ts';
import { BENCH_PASSWORD, benchSecret, hotTokenId, type SeedSpec } from './seed.ts';

// ---------------------------------------------------------------- options

export const SCENARIO_IDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];
/** Run when --scenarios is not given: all but 10 (the capacity check seeds 1,000,000 users; opt-in). */
export const DEFAULT_SCENARIO_IDS: readonly ScenarioId[] = SCENARIO_IDS.filter((id) => id !== 10);

/**
 * What a run measures on: a dialect with tokend's own tables, or `ripple`, tokend in place on a MariaDB
 * database made with the Ripple family's users and tokens (DATABASE_SCHEMA=ripple).
 */
export type Backend = Dialect | 'ripple';

export interface Options {
  quick: boolean;
  check: boolean;
  scenarios: Set<ScenarioId>;
  backends: Backend[];
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
  /** `--log-level`: tokend's LOG_LEVEL for this run; undefined leaves it unset (the shipped info). */
  logLevel: string | undefined;
  /** The data set of scenario 10 (the capacity check), in a database of its own kept between runs. */
  capacitySpec: SeedSpec;
}

// ---------------------------------------------------------------- scenarios and their rows

export interface Check {
  what: string;
  value: number;
  op: '>=' | '<=';
  limit: number;
  pass: boolean;
}

/** One line of the table and of results.json's `rows`. */
export interface Row {
  /** 0: seeding */
  scenario: ScenarioId | 0;
  title: string;
  backend: Backend;
  tokend: string;
  baseline: string;
  ratio: number | null;
  /** The lowest and highest ratio of single rounds: how much the machine's noise moved it. */
  ratioRange?: [number, number];
  checks: Check[];
  note?: string;
  /** The settings tokend's side ran with beyond its shipped defaults (Tokend.settings); null: no tokend. */
  settings: Settings | null;
  figures: Record<string, unknown>;
}

/** What a scenario runs on: the run's options and one backend's seeded database. */
export interface Context {
  opts: Options;
  backend: Backend;
  database: TestDatabase;
  /** The bench's own handle on the seeded database (not tokend's). */
  store: Store;
}

interface ScenarioInfo {
  id: ScenarioId;
  /** How the progress lines name it. */
  name: string;
  /** Run on the first backend only: what it measures does not depend on the database. */
  firstBackendOnly: boolean;
}

/**
 * A scenario measured against a 1-worker tokend that the driver starts on the seeded database with the
 * scenario's settings, and shares among every scenario of the same settings.
 */
export interface SharedScenario extends ScenarioInfo {
  tokend: 'shared';
  /** What the scenario is about that needs tokend's configuration beyond its shipped defaults. */
  settings: Settings;
  run(context: Context, tokend: Tokend): Promise<Row>;
}

/** A scenario that starts the servers it measures. */
export interface OwnScenario extends ScenarioInfo {
  tokend: 'own';
  run(context: Context): Promise<Row>;
}

/**
 * One scenario (bench/scenarios/N-….ts): it measures tokend against its baseline and returns its row,
 * whose checks hold the scenario's targets (bench/README.md, "Scenarios, baselines and targets"; each
 * module names its limits at its top).
 */
/** A scenario that makes (or reuses) a database of its own and starts the servers it measures: scenario 10. */
export interface OwnDataScenario extends ScenarioInfo {
  tokend: 'own data';
  run(context: Pick<Context, 'opts' | 'backend'>): Promise<Row>;
}

export type Scenario = SharedScenario | OwnScenario | OwnDataScenario;

export const range = (ratios: number[]): [number, number] => [Math.min(...ratios), Math.max(...ratios)];

export const check = (what: string, value: number, op: Check['op'], limit: number): Check => ({
  what,
  value,
  op,
  limit,
  pass: Number.isFinite(value) && (op === '>=' ? value >= limit : value <= limit),
});

// ---------------------------------------------------------------- formatting

export const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '—';
export const ms = (n: number) => `${fmt(n, n < 10 ? 2 : 1)} ms`;
export const mb = (bytes: number) => `${fmt(bytes / 2 ** 20, 1)} MB`;
export const describeLoad = (r: LoadResult) =>
  `${fmt(r.rps)} req/s, p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}` +
  (r.cpuUsPerRequest !== undefined ? `, ${fmt(r.cpuUsPerRequest)} µs CPU/req` : '') +
  (r.failures > 0 ? `, **${r.failures} failed**` : '');

export const progress = (line: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

// ---------------------------------------------------------------- requests

export const SELF_PATH = '/api/v1/tokens/self';
export const LIST_PATH = '/api/v1/tokens';
export const CREATE_PATH = '/api/v1/tokens';
export const FIX_PATH = '/api/v1/tokens/fix_privileges';
/**
 * The tokens that read, one per connection, as distinct clients send distinct tokens (one token shared
 * by every connection would let a batched lookup find one row for all of them). Owned by ordinary users
 * (the listing user holds only TOKENS_PER_USER_MAX); ids of one digit count (2000–9999), so every answer
 * has the size of the one the baseline sends.
 */
const FIRST_READ_TOKEN = 2000;
export const MAX_READ_CONNECTIONS = 8000;
const readHeadersOf = (connections: number) =>
  Array.from({ length: connections }, (_, i) => ({ 'x-ripple-token': benchSecret(FIRST_READ_TOKEN + i) }));
/** The first read connection's headers, for a single request. */
export const readHeaders = readHeadersOf(1)[0]!;
/** A token of the listing user (user 1, who holds the seeded TOKENS_PER_USER_MAX tokens). */
export const listingHeaders = { 'x-ripple-token': benchSecret(hotTokenId(0)) };

/** Scenario 1's load: `GET /tokens/self`, a seeded token per connection. */
export const readSpec = (opts: Pick<Options, 'connections'>) => ({
  path: SELF_PATH,
  connectionHeaders: readHeadersOf(opts.connections),
  connections: opts.connections,
});

export const createBody = JSON.stringify({
  id: 3,
  password: BENCH_PASSWORD,
  privileges: 6,
  description: 'bench',
});
/** Scenario 2's load: token creation by id and password. */
export const createSpec = (opts: Options) => ({
  path: CREATE_PATH,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: createBody,
  connections: opts.createConnections,
});

export async function expectStatus(
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

// ---------------------------------------------------------------- the servers

/** tokend's environment variables, beyond its shipped defaults. */
export type Settings = Record<string, string>;

/** How a row names the settings its tokend ran with. */
export const describeSettings = (settings: Settings | null): string =>
  settings === null
    ? '—'
    : Object.keys(settings).length === 0
      ? 'shipped defaults'
      : Object.entries(settings)
          .map(([name, value]) => `${name}=${value}`)
          .join(', ');

/**
 * What every tokend of the bench is given whatever the scenario, and no row names: its database, and no
 * cap on the requests of a keep-alive connection. The cap (10,000) would answer 503 to the requests the
 * load generator has already sent on a connection being closed (it does not wait for the close), and
 * the baseline has no such cap; a request's own work is the same either way.
 */
function harnessEnv(
  database: Pick<TestDatabase, 'url'> & Partial<Pick<TestDatabase, 'config'>>,
): Record<string, string> {
  const inPlace = database.config?.kind === 'mysql' && database.config.schema === 'ripple';
  return {
    DATABASE_URL: database.url,
    ...(inPlace ? { DATABASE_SCHEMA: 'ripple' } : {}),
    MAX_REQUESTS_PER_SOCKET: '0',
  };
}

/**
 * Token creation measured at full speed (scenarios 2 and 3): the login limits and the one on tokens made
 * per user (TOKEN_CREATE_RATE_LIMIT, 60 an hour by default, which one bench user passes in a second)
 * raised out of reach; the limiters themselves still run for every attempt.
 */
export const RAISED_LOGIN_LIMITS: Settings = {
  LOGIN_RATE_LIMIT: '1000000000',
  LOGIN_IP_RATE_LIMIT: '1000000000',
  TOKEN_CREATE_RATE_LIMIT: '1000000000',
};

/** The METRICS_TOKEN of a tokend whose /metrics a scenario scrapes (it is off without one): scenario 4. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';
export const METRICS_ON: Settings = { METRICS_TOKEN: BENCH_METRICS_TOKEN };

/**
 * The settings of a tokend of this run: tokend's variables set in the bench's own environment (passed
 * on, so they are named), the run's `--log-level`, then the scenario's.
 */
export function tokendSettings(opts: Pick<Options, 'logLevel'>, scenario: Settings = {}): Settings {
  const harness = harnessEnv({ url: '' });
  const inherited: Settings = {};
  for (const name of knownVariables()) {
    const value = process.env[name];
    if (value !== undefined && !(name in harness) && name !== 'PORT') inherited[name] = value;
  }
  return {
    ...inherited,
    ...(opts.logLevel === undefined ? {} : { LOG_LEVEL: opts.logLevel }),
    ...scenario,
  };
}

/** The environment of a tokend with these settings on this database. */
export const tokendEnv = (
  database: Pick<TestDatabase, 'url'> & Partial<Pick<TestDatabase, 'config'>>,
  settings: Settings,
): Record<string, string> => ({
  ...settings,
  ...harnessEnv(database),
});

/** A tokend the bench started, and the settings it runs with beyond its shipped defaults. */
export interface Tokend extends Server {
  readonly settings: Settings;
}

export async function startTokend(
  { opts, database }: Pick<Context, 'opts' | 'database'>,
  scenario: Settings = {},
  { name = 'tokend', nodeOptions = [] }: { name?: string; nodeOptions?: string[] } = {},
): Promise<Tokend> {
  const settings = tokendSettings(opts, scenario);
  const server = await startServer({
    name,
    // The production entry (`npm start`), which turns on Node's compile cache.
    args: ['bin/tokend.js', 'serve'],
    env: tokendEnv(database, settings),
    readyPath: SELF_PATH,
    nodeOptions,
  });
  return Object.assign(server, { settings });
}

/** The bare Fastify app (bench/baseline.ts), which logs nothing, answering SELF_PATH with `body`. */
export function startBaseline(body: string) {
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

/**
 * The floor of the authenticated read (bench/floor.ts): a bare Fastify app doing only the read's
 * irreducible work on the same database as tokend, logging one access line per request to its log file.
 */
export function startFloor(
  database: Pick<TestDatabase, 'url'> & Partial<Pick<TestDatabase, 'config'>>,
  { nodeOptions = [] }: { nodeOptions?: string[] } = {},
) {
  const { DATABASE_URL, DATABASE_SCHEMA } = harnessEnv(database);
  return startServer({
    name: 'floor',
    args: ['bench/floor.ts'],
    env: {
      DATABASE_URL: DATABASE_URL!,
      ...(DATABASE_SCHEMA === undefined ? {} : { DATABASE_SCHEMA }),
      NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
    },
    readyPath: '/ready',
    nodeOptions,
  });
}

// ---------------------------------------------------------------- comparisons

/** One side of a comparison: a server and the load it gets. */
export interface Side {
  server: Server;
  spec: Omit<LoadSpec, 'port' | 'seconds'>;
}

/** Seconds of one alternating run. */
export const sliceSeconds = (opts: Options) => opts.seconds / opts.rounds;

/** What compareSides gives of each side: its runs combined, and each run (one per round). */
export interface Compared {
  combined: LoadResult;
  rounds: LoadResult[];
}

/**
 * Warms every side up, then alternates short runs of each, `opts.rounds` times. Each run measures the
 * server's CPU per request and, given the database server's URL (PostgreSQL, MariaDB), the database
 * server's processes' CPU per request over the same run.
 */
export async function compareSides(
  opts: Options,
  sides: readonly Side[],
  databaseUrl?: string,
): Promise<Compared[]> {
  const seconds = sliceSeconds(opts);
  for (const side of sides)
    await warmUp({ ...side.spec, port: side.server.port, seconds: opts.warmUpSeconds });
  const cpu = (server: Server) => () => cpuSecondsOf(server.child.pid ?? -1, true);
  const names = databaseUrl === undefined ? [] : databaseServerProcesses(databaseUrl);
  const databaseCpu = names.length === 0 ? undefined : () => cpuSecondsOfProcesses(names);
  const runs = await alternate(
    opts.rounds,
    sides.map(
      (side) => () =>
        loadWithCpu({ ...side.spec, port: side.server.port, seconds }, cpu(side.server), databaseCpu),
    ),
  );
  return runs.map((rounds) => ({ combined: combine(rounds), rounds }));
}

/** Warms both sides up, then alternates short runs of each; returns each side's runs combined, and b/a req/s per round. */
export async function compareLoads(
  opts: Options,
  a: Side,
  b: Side,
): Promise<[LoadResult, LoadResult, number[]]> {
  const [as, bs] = await compareSides(opts, [a, b]);
  return [as!.combined, bs!.combined, bs!.rounds.map((r, i) => r.rps / as!.rounds[i]!.rps)];
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)]!;
};
export const sleep = (msDelay: number) => new Promise((r) => setTimeout(r, msDelay));
