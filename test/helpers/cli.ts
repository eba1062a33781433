// Runs the tokend CLI, in this process through the dispatcher main.ts calls (runCli of src/cli/run.ts, its
// standard streams and environment captured) or as a child process (as a user would: `serve`, another
// entry point, another user, or a test that asks for a real process), and opens the tokend app on the
// same database.
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { commandsFor } from '../../src/cli/commands/index.ts';
import { runCli as dispatch } from '../../src/cli/run.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { createMigratedDatabase, createTestDatabase, type TestDatabase } from './databases.ts';
import type { Backend } from './dialects.ts';
import { signUpOnWebsite } from './ripple-schema.ts';
import { createConnection } from 'mysql2/promise';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Longest one CLI run may take before the test fails (a hung process must not hang the suite). */
const RUN_LIMIT_MS = 20_000;

/** A user to run the CLI as (spawn's uid and gid), e.g. one that file permissions apply to. */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * Who file permissions apply to: this process, or, when it runs as root (which ignores permission
 * bits), the user "nobody". The files such a test makes must then be reachable for that user.
 */
export const UNPRIVILEGED: RunAs | undefined =
  process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;

/** Runs a command to its end, collecting its output; fails the test if it outlives `limitMs`. */
export function runProcess(
  command: string,
  args: string[],
  options: { env: Record<string, string>; input?: string; cwd?: string; as?: RunAs; limitMs?: number },
): Promise<CliResult> {
  const limitMs = options.limitMs ?? RUN_LIMIT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.as ? { uid: options.as.uid, gid: options.as.gid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${limitMs} ms: ${stderr}`));
    }, limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

export interface CliOptions {
  /** the whole environment the command sees, besides PATH, BCRYPT_COST=4 and LOG_LEVEL=silent */
  env?: Record<string, string>;
  /** standard input */
  input?: string;
  /** a child process running this file (bin/tokend.js, …) instead of src/cli/main.ts in this process */
  entry?: string;
  /** a child process running as this user */
  as?: RunAs;
  /** a child process even where this process would do: the smoke tests of the real command */
  process?: boolean;
}

/**
 * Runs `tokend args…` to its end: in this process (what main.ts does, with the streams and the
 * environment given instead of the process's), or as a child process for `serve` (which runs until a
 * signal), another entry point, another user, or `process: true`.
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const env = { PATH: process.env.PATH ?? '', BCRYPT_COST: '4', LOG_LEVEL: 'silent', ...options.env };
  if (
    options.process === true ||
    options.entry !== undefined ||
    options.as !== undefined ||
    args[0] === 'serve'
  )
    return runProcess(process.execPath, [options.entry ?? MAIN, ...args], {
      env,
      input: options.input,
      as: options.as,
    });
  return runInProcess(args, env, options.input);
}

/** `tokend args…` through the dispatcher in this process: standard input `input`, the output collected. */
export async function runInProcess(
  args: string[],
  env: Record<string, string>,
  input = '',
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await dispatch(await commandsFor(args), args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Readable.from(input === '' ? [] : [Buffer.from(input)]),
    env,
  });
  return { code, stdout, stderr };
}

/**
 * The origin a server child process logs as listening on (Fastify's "Server listening at …" line), or a
 * rejection with its output when it exits first or says nothing within `limitMs`.
 */
export function listeningOrigin(child: ChildProcess, exited: Promise<number | null>, limitMs = RUN_LIMIT_MS) {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const origin = new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "listening" log line: ${out}${stderr}`)), limitMs);
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited early (${code}): ${stderr}`));
    });
  });
  return { origin, stderr: () => stderr };
}

/** Parses stdout as exactly one JSON object (the --json contract). */
export function onlyJson(r: CliResult): Record<string, unknown> {
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  if (lines.length !== 1) throw new Error(`expected one line of JSON on stdout, got: ${r.stdout}`);
  const value: unknown = JSON.parse(lines[0] ?? '');
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`expected a JSON object, got: ${r.stdout}`);
  return value as Record<string, unknown>;
}

/** A `--json` error: what stderr holds, one JSON object (warnings before it are objects too). */
export interface JsonError {
  error: string;
  code: 'usage' | 'config' | 'database' | 'failed';
  [field: string]: unknown;
}

/**
 * The error of a `--json` run: every line on stderr is a JSON object, exactly one of them has `error`
 * (a message and its `code`), and nothing is on stdout.
 */
export function jsonError(r: CliResult): JsonError {
  if (r.stdout !== '') throw new Error(`expected nothing on stdout, got: ${r.stdout}`);
  const objects = r.stderr
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const errors = objects.filter((o) => 'error' in o);
  if (errors.length !== 1) throw new Error(`expected one JSON error on stderr, got: ${r.stderr}`);
  const found = errors[0] as JsonError;
  if (typeof found.error !== 'string' || !['usage', 'config', 'database', 'failed'].includes(found.code))
    throw new Error(`expected {"error": string, "code": usage|config|database|failed}, got: ${r.stderr}`);
  return found;
}

export interface CliHarness {
  database: TestDatabase;
  /** Runs `tokend …` against this test's database. */
  cli(args: string[], options?: { env?: Record<string, string>; input?: string }): Promise<CliResult>;
  /** Runs `tokend … --json`, expects exit 0 and returns the one JSON object. */
  json(args: string[], options?: { input?: string }): Promise<Record<string, unknown>>;
  /** The HTTP app over the same database (built on first use). */
  app(): Promise<FastifyInstance>;
  /**
   * A user with a password (privileges 3 unless given): made by `tokend user create`, or in place
   * (`ripple`), where tokend makes no users, as the family's website signs one up. Returns its id.
   */
  createUser(user: { username: string; password: string; privileges?: number; id?: number }): Promise<number>;
}

/**
 * The CLI on a database of the test's own: migrated already (a copy of the backend's template), or with
 * `empty`, as before tokend's first start (in place, the family's form with `tokend migrate` applied).
 */
export async function cliHarness(
  t: TestContext,
  backend: Backend = 'sqlite',
  options: { empty?: boolean } = {},
) {
  const database = await (options.empty === true
    ? createTestDatabase(backend)
    : createMigratedDatabase(backend));
  let app: FastifyInstance | undefined;
  t.after(async () => {
    await app?.close();
    await database.drop();
  });
  const harness: CliHarness = {
    database,
    cli: (args, options = {}) => runCli(args, { ...options, env: { ...database.env, ...options.env } }),
    async json(args, options = {}) {
      const r = await harness.cli([...args, '--json'], options);
      if (r.code !== 0) throw new Error(`tokend ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return onlyJson(r);
    },
    async createUser(user) {
      if (backend === 'ripple') {
        const family = await createConnection({ uri: database.url });
        try {
          return await signUpOnWebsite(family, { ...user, privileges: user.privileges ?? 3 });
        } finally {
          await family.end();
        }
      }
      const args = ['user', 'create', '--username', user.username, '--password', user.password];
      if (user.privileges !== undefined) args.push('--privileges', String(user.privileges));
      if (user.id !== undefined) args.push('--user-id', String(user.id));
      return (await harness.json(args)).id as number;
    },
    async app() {
      if (app) return app;
      const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4' });
      config.database = database.config;
      app = await buildApp(config, { store: await openStore(database.config) });
      await app.ready();
      return app;
    },
  };
  return harness;
}
