// Environment → typed, validated configuration. Every bad value is reported with the variable's name.
import { availableParallelism } from 'node:os';
import { MAX_HOPS, NAMED_RANGES, trustEntryProblem, trustFunction, type TrustProxy } from './trust-proxy.ts';
import { decimalInteger, integerInRange } from './decimal-integer.ts';
import { showableTextProblem } from './shown-text.ts';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string }
  | {
      kind: 'mysql';
      url: string;
      /**
       * DATABASE_SCHEMA=ripple: the database is a Ripple-family server's own, served in place (its users and
       * tokens tables live, tokend's own tables beside them under TOKEND_TABLE_PREFIX: src/store/ripple.ts).
       */
      schema?: 'ripple';
    };

/** DATABASE_SCHEMA's values: tokend's own tables, or a Ripple-family database in place. */
export const DATABASE_SCHEMAS = ['tokend', 'ripple'] as const;

/** The database of DATABASE_URL in the layout of DATABASE_SCHEMA (a Ripple-family one on MySQL/MariaDB only). */
export function parseDatabase(url: string, schema: string | undefined): DatabaseConfig {
  const database = parseDatabaseUrl(url);
  const layout = schema === undefined || schema.trim() === '' ? 'tokend' : schema.trim();
  if (!(DATABASE_SCHEMAS as readonly string[]).includes(layout))
    throw new ConfigError(
      'DATABASE_SCHEMA',
      `expected ${DATABASE_SCHEMAS.join(' or ')}; got ${JSON.stringify(schema)}`,
    );
  if (layout === 'tokend') return database;
  if (database.kind !== 'mysql')
    throw new ConfigError(
      'DATABASE_SCHEMA',
      `ripple serves a Ripple-family database in place, which is MySQL or MariaDB: DATABASE_URL must be mysql://… naming that database, not ${database.kind}`,
    );
  return { ...database, schema: 'ripple' };
}

export interface Config {
  database: DatabaseConfig;
  dbPoolSize: number;
  redisUrl: string | undefined;
  /** Prefix of every Redis key tokend writes (several deployments or tests can share one Redis). */
  redisKeyPrefix: string;
  /** Longest wait for a database connection and for a query answer before the request fails (ms). */
  dbTimeoutMs: number;
  host: string;
  port: number;
  basePath: string;
  trustProxy: TrustProxy;
  loginRateLimit: number;
  loginRateWindowS: number;
  /** Login attempts per client address across all users per window (LOGIN_IP_RATE_LIMIT). */
  loginIpRateLimit: number;
  logLevel: string;
  /** ACCESS_LOG: one line per request at info (src/http/logging.ts AccessLog); off, none. */
  accessLog: boolean;
  workers: number;
  bcryptCost: number;
  /** How many bcrypt verifications may run at once (they run on libuv's thread pool). */
  bcryptConcurrency: number;
  /** Password checks that may wait for a turn (PASSWORD_QUEUE_MAX); beyond it logins answer 503 at once. */
  passwordQueueMax: number;
  lastUsedFlushMs: number;
  bodyLimit: number;
  /** GET /metrics requires `Authorization: Bearer <metricsToken>`; unset, /metrics is off (404). */
  metricsToken: string | undefined;
  /** How often expired tokens are deleted (seconds). */
  tokenSweepIntervalS: number;
  /** SECURITY_LOG_DAYS: events of the security log older than this are deleted by the same sweep. */
  securityLogDays: number;
  /** Abuse limits of the HTTP server (see SECURITY.md). Timeouts in ms; 0 turns a limit off. */
  http: HttpLimits;
  /** Live API tokens one user may hold (TOKENS_PER_USER_MAX); creation beyond it is refused with 409. */
  tokensPerUserMax: number;
  /**
   * API tokens one user may make (create or regenerate, API and token page) per window
   * (TOKEN_CREATE_RATE_LIMIT per TOKEN_CREATE_RATE_WINDOW_S; src/auth/creation-limit.ts): 429 beyond it.
   */
  tokenCreateRate: { points: number; windowS: number };
  /** Sudo mode: a web session older than this since its last password entry must enter it again (s). */
  sudoWindowS: number;
  /** Bounds on what OAuth keeps for a user (src/oauth/issue.ts); beyond them the oldest end. */
  oauthGrants: OAuthGrantBounds;
  /** Applications one user may register on the pages (OAUTH_CLIENTS_PER_USER_MAX; src/oauth/clients.ts). */
  oauthClientsPerUserMax: number;
  /** The token endpoint's rate limits (src/oauth/token-limits.ts): 429 slow_down beyond them. */
  oauthTokenRate: OAuthTokenRate;
  /** The server's public origin (scheme, host, port), e.g. https://tokens.example; undefined: taken from each request. */
  publicUrl: string | undefined;
  /** SERVER_NAME: the name every page shows (the community's server, e.g. "Akatsuki"); default "tokend". */
  serverName: string;
  /** On SIGTERM, how long to keep serving (answering `Connection: close`, not ready) before closing. */
  shutdownDrainMs: number;
  /** RIPPLE_TIME_FORMAT: how the API writes `last_updated` (src/tokens/time-format.ts). */
  rippleTimeFormat: TimeFormat;
  /**
   * SIGNING_KEY_SECRET: the secrets that seal the OpenID Connect signing keys at rest, the first sealing
   * (src/oauth/key-seal.ts); empty: stored unsealed. Never logged.
   */
  signingKeySecrets: string[];
}

/** Unix seconds (the spec's form, the default), or an RFC 3339 string for frontends that expect one. */
export const TIME_FORMATS = ['unix', 'rfc3339'] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

export interface OAuthGrantBounds {
  /** Live grants one user may hold with one application, and unexchanged codes (OAUTH_GRANTS_PER_CLIENT_MAX). */
  perClient: number;
  /** The same across every application (OAUTH_GRANTS_PER_USER_MAX). */
  perUser: number;
}

export interface OAuthTokenRate {
  /** Token requests per user and application per window (OAUTH_TOKEN_RATE_LIMIT). */
  perClient: number;
  /** Token requests per user across applications per window (OAUTH_TOKEN_USER_RATE_LIMIT). */
  perUser: number;
  /** OAUTH_TOKEN_RATE_WINDOW_S */
  windowS: number;
}

export interface HttpLimits {
  /** A socket with no traffic for this long is closed. */
  connectionTimeoutMs: number;
  /** The whole request (headers and body) must arrive within this time, or 408. */
  requestTimeoutMs: number;
  /** The request headers must arrive within this time (slowloris), or 408. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** A keep-alive connection is closed after serving this many requests. */
  maxRequestsPerSocket: number;
  /** Largest total size of the request line and headers, in bytes, or 431. */
  maxHeaderSize: number;
  /** Open connections allowed from one socket address; more are closed at once. 0: no cap. */
  maxConnectionsPerIp: number;
}

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.variable = variable;
  }
}

type Env = Record<string, string | undefined>;

/** An integer setting: unset or empty gives the default; anything else outside min..max says the range. */
function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = integerInRange(raw.trim(), min, max);
  if (n === undefined)
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

export function parseDatabaseUrl(raw: string): DatabaseConfig {
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path === '')
      throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path, e.g. sqlite:data/tokend.db');
    return { kind: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) return { kind: 'postgres', url: raw };
  if (/^(mysql|mariadb):\/\//.test(raw)) return { kind: 'mysql', url: raw.replace(/^mariadb:/, 'mysql:') };
  // A bare file path (no scheme at all) is most likely a SQLite file given without its `sqlite:`. Such a
  // value holds no password form (user:pass@), so it is safe to repeat.
  if (raw !== '' && !raw.includes(':'))
    throw new ConfigError(
      'DATABASE_URL',
      `${JSON.stringify(raw)} has no scheme: did you mean sqlite:${raw}? (or postgres://… or mysql://…)`,
    );
  const scheme = raw.includes(':') ? raw.slice(0, raw.indexOf(':')) : raw;
  throw new ConfigError(
    'DATABASE_URL',
    `unknown scheme ${JSON.stringify(scheme)}; use sqlite:PATH, postgres://… or mysql://…`,
  );
}

const TRUST_PROXY_FORMS =
  `false, a hop count (1 to ${MAX_HOPS}: the number of proxies in front of tokend), or a comma-separated ` +
  `list of the proxies' addresses/CIDRs and ${NAMED_RANGES.join('/')} (e.g. 10.0.0.0/8 or loopback)`;

function parseTrustProxy(raw: string | undefined): TrustProxy {
  if (raw === undefined) return false;
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'false' || v === 'no') return false;
  if (v === 'true' || v === 'yes')
    throw new ConfigError(
      'TRUST_PROXY',
      `${JSON.stringify(raw)} would trust every X-Forwarded-For, letting any client choose its address; ` +
        "give the number of proxies in front of tokend (e.g. 1), loopback, or the proxies' addresses/CIDRs",
    );
  const hops = decimalInteger(v);
  if (hops !== undefined) {
    // No proxy in front, however the 0 is written ('0', '00'): exactly `false`, so that every default that
    // follows from TRUST_PROXY (the per-address connection cap) is the one without a proxy.
    if (hops === 0) return false;
    if (hops > MAX_HOPS)
      throw new ConfigError(
        'TRUST_PROXY',
        `${JSON.stringify(raw)} is more proxies than any real chain has, and would let clients choose ` +
          `their own address; expected ${TRUST_PROXY_FORMS}`,
      );
    return hops;
  }
  const list = v.split(',').map((s) => s.trim());
  for (const entry of list) {
    const problem = trustEntryProblem(entry);
    if (problem !== undefined)
      throw new ConfigError('TRUST_PROXY', `${problem}; expected ${TRUST_PROXY_FORMS}`);
  }
  // The library that reads them must take them too (it refuses what the check above may have missed).
  try {
    trustFunction(list);
  } catch (err) {
    throw new ConfigError('TRUST_PROXY', `${(err as Error).message}; expected ${TRUST_PROXY_FORMS}`);
  }
  return list;
}

function parseOnOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === '') return fallback;
  if (value === 'on') return true;
  if (value === 'off') return false;
  throw new ConfigError(name, `expected on or off; got ${JSON.stringify(raw)}`);
}

function parseTimeFormat(raw: string | undefined): TimeFormat {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === '') return 'unix';
  const format = TIME_FORMATS.find((f) => f === value);
  if (format === undefined)
    throw new ConfigError(
      'RIPPLE_TIME_FORMAT',
      `expected unix (Unix seconds, the default) or rfc3339 (like 2026-11-26T05:00:00Z); got ${JSON.stringify(raw)}`,
    );
  return format;
}

function parseMetricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,}$/.test(raw))
    throw new ConfigError(
      'METRICS_TOKEN',
      'expected at least 16 printable characters without spaces (or leave it unset: /metrics is then off)',
    );
  return raw;
}

/** Shortest secret SIGNING_KEY_SECRET takes (each of them): 32 characters, e.g. `openssl rand -base64 32`. */
export const SIGNING_KEY_SECRET_MIN = 32;

function parseSigningKeySecrets(raw: string | undefined): string[] {
  const secrets = (raw ?? '').split(/\s+/).filter((s) => s !== '');
  // Set to blanks, it would read as unset, and the keys would be stored unencrypted without a word.
  if (raw !== undefined && raw !== '' && secrets.length === 0)
    throw new ConfigError(
      'SIGNING_KEY_SECRET',
      'holds only spaces: set the secret (e.g. openssl rand -base64 32), or leave it unset to store the keys unencrypted',
    );
  for (const [i, secret] of secrets.entries())
    if (secret.length < SIGNING_KEY_SECRET_MIN)
      // The secret itself is never repeated in a message.
      throw new ConfigError(
        'SIGNING_KEY_SECRET',
        `expected secrets of at least ${SIGNING_KEY_SECRET_MIN} characters, separated by spaces (e.g. openssl rand -base64 32); secret ${i + 1} has ${secret.length}`,
      );
  return secrets;
}

/** Longest SERVER_NAME, in characters. */
export const SERVER_NAME_MAX = 64;

function parseServerName(raw: string | undefined): string {
  const name = raw?.trim().replace(/\s+/g, ' ');
  if (name === undefined || name === '') return 'tokend';
  if ([...name].length > SERVER_NAME_MAX)
    throw new ConfigError(
      'SERVER_NAME',
      `expected at most ${SERVER_NAME_MAX} characters; got ${[...name].length}`,
    );
  const problem = showableTextProblem(name);
  if (problem !== undefined) throw new ConfigError('SERVER_NAME', `the name ${problem}`);
  return name;
}

function parsePublicUrl(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(
      'PUBLIC_URL',
      `expected an absolute URL like https://tokens.example; got ${JSON.stringify(raw)}`,
    );
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username ||
    url.password ||
    url.search ||
    url.hash
  )
    throw new ConfigError(
      'PUBLIC_URL',
      `expected http(s)://host[:port] without credentials, query or fragment; got ${JSON.stringify(raw)}`,
    );
  if (url.pathname !== '/')
    throw new ConfigError(
      'PUBLIC_URL',
      `expected the server's origin without a path (tokend serves at its root); got ${JSON.stringify(raw)}`,
    );
  return url.origin;
}

/**
 * Waiting password checks: at the default BCRYPT_COST the queue holds about two seconds of one bcrypt
 * thread's work (bench/HISTORY.md), so a login that gets a place is answered within that, and one that
 * does not is told at once to retry.
 */
export const DEFAULT_PASSWORD_QUEUE_MAX = 32;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const basePath = env.BASE_PATH ?? '/api';
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath))
    throw new ConfigError(
      'BASE_PATH',
      `expected a path like /api (or empty), without a trailing slash; got ${JSON.stringify(basePath)}`,
    );
  const logLevel = (env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(
      'LOG_LEVEL',
      `expected one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(env.LOG_LEVEL)}`,
    );
  const host = env.HOST ?? '127.0.0.1';
  if (host.trim() === '') throw new ConfigError('HOST', 'must not be empty');
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl))
    throw new ConfigError('REDIS_URL', `expected redis://… or rediss://…; got ${JSON.stringify(redisUrl)}`);
  return {
    database: parseDatabase(env.DATABASE_URL ?? 'sqlite:data/tokend.db', env.DATABASE_SCHEMA),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 1000),
    redisUrl,
    redisKeyPrefix: env.REDIS_KEY_PREFIX ?? 'tokend:',
    dbTimeoutMs: integer(env, 'DB_TIMEOUT_MS', 2000, 100, 600_000),
    host,
    port: integer(env, 'PORT', 8080, 0, 65535),
    basePath,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    loginRateLimit: integer(env, 'LOGIN_RATE_LIMIT', 5, 1, 1_000_000_000),
    loginRateWindowS: integer(env, 'LOGIN_RATE_WINDOW_S', 60, 1, 86_400 * 365),
    loginIpRateLimit: integer(env, 'LOGIN_IP_RATE_LIMIT', 100, 1, 1_000_000_000),
    logLevel,
    accessLog: parseOnOff(env, 'ACCESS_LOG', true),
    workers: integer(env, 'WORKERS', 1, 1, 256),
    bcryptCost: integer(env, 'BCRYPT_COST', 10, 4, 31),
    // Every core; the hasher leaves one to the event loop while it is busy (src/users/passwords.ts).
    bcryptConcurrency: integer(env, 'BCRYPT_CONCURRENCY', availableParallelism(), 1, 1024),
    passwordQueueMax: integer(env, 'PASSWORD_QUEUE_MAX', DEFAULT_PASSWORD_QUEUE_MAX, 1, 1_000_000),
    lastUsedFlushMs: integer(env, 'LAST_USED_FLUSH_MS', 1000, 10, 1000),
    bodyLimit: integer(env, 'BODY_LIMIT', 64 * 1024, 1024, 100 * 1024 * 1024),
    metricsToken: parseMetricsToken(env.METRICS_TOKEN),
    tokenSweepIntervalS: integer(env, 'TOKEN_SWEEP_INTERVAL_S', 60, 1, 86_400),
    securityLogDays: integer(env, 'SECURITY_LOG_DAYS', 90, 1, 36_500),
    http: loadHttpLimits(env, parseTrustProxy(env.TRUST_PROXY) !== false),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 1000, 0, 8000),
    sudoWindowS: integer(env, 'SUDO_WINDOW_S', 15 * 60, 0, 86_400),
    tokensPerUserMax: integer(env, 'TOKENS_PER_USER_MAX', 1000, 1, 1_000_000),
    tokenCreateRate: {
      points: integer(env, 'TOKEN_CREATE_RATE_LIMIT', 60, 1, 1_000_000_000),
      windowS: integer(env, 'TOKEN_CREATE_RATE_WINDOW_S', 3600, 1, 86_400 * 365),
    },
    oauthGrants: {
      perClient: integer(env, 'OAUTH_GRANTS_PER_CLIENT_MAX', 10, 1, 1_000_000),
      perUser: integer(env, 'OAUTH_GRANTS_PER_USER_MAX', 100, 1, 1_000_000),
    },
    oauthClientsPerUserMax: integer(env, 'OAUTH_CLIENTS_PER_USER_MAX', 20, 1, 1_000_000),
    oauthTokenRate: {
      perClient: integer(env, 'OAUTH_TOKEN_RATE_LIMIT', 10, 1, 1_000_000_000),
      perUser: integer(env, 'OAUTH_TOKEN_USER_RATE_LIMIT', 30, 1, 1_000_000_000),
      windowS: integer(env, 'OAUTH_TOKEN_RATE_WINDOW_S', 60, 1, 86_400 * 365),
    },
    publicUrl: parsePublicUrl(env.PUBLIC_URL),
    serverName: parseServerName(env.SERVER_NAME),
    rippleTimeFormat: parseTimeFormat(env.RIPPLE_TIME_FORMAT),
    signingKeySecrets: parseSigningKeySecrets(env.SIGNING_KEY_SECRET),
  };
}

function loadHttpLimits(env: Env, behindProxy: boolean): HttpLimits {
  const hour = 3_600_000;
  const limits: HttpLimits = {
    connectionTimeoutMs: integer(env, 'CONNECTION_TIMEOUT_MS', 60_000, 0, hour),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 0, hour),
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, hour),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, hour),
    maxRequestsPerSocket: integer(env, 'MAX_REQUESTS_PER_SOCKET', 10_000, 0, 1_000_000_000),
    maxHeaderSize: integer(env, 'MAX_HEADER_SIZE', 16 * 1024, 1024, 1024 * 1024),
    // Behind a trusted proxy every connection comes from the proxy: the cap belongs there (SECURITY.md).
    maxConnectionsPerIp: integer(env, 'MAX_CONNECTIONS_PER_IP', behindProxy ? 0 : 512, 0, 1_000_000),
  };
  // The headers are part of the request: their deadline cannot be later than the whole request's.
  if (limits.requestTimeoutMs !== 0 && limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new ConfigError(
      'HEADERS_TIMEOUT_MS',
      `must not exceed REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs}); got ${limits.headersTimeoutMs}`,
    );
  return limits;
}
