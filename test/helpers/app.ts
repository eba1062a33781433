// A tokend app on a fresh database, closed (and the database dropped) when done:
// - build(t, dialect): one per test, closed after it;
// - sharedHarness(dialect): one per describe block, for tests that do not disturb one another;
// - openHarness(dialect): the app and the function that closes it, which both of them use.
// On the in-place backend (`ripple`) the database is of the Ripple family's form and the harness makes
// users as the family's website signs them up (tokend makes none there).
import { after, before, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.ts';
import { buildApp, type BuildOptions } from '../../src/app.ts';
import { createConnection, type Connection } from 'mysql2/promise';
import { openStore, type Db, type Dialect, type Store } from '../../src/store/database.ts';
import { inPlaceMigrationTables } from '../../src/store/ripple.ts';
import { insertUser } from '../../src/users/repository.ts';
import { PasswordHasher, CURRENT_PASSWORD_VERSION } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { insertToken } from '../../src/auth/mint.ts';
import { hashTokenSecret, newTokenSecret } from '../../src/auth/secret.ts';
import { createMigratedDatabase, type TestDatabase } from './databases.ts';
import type { Backend } from './dialects.ts';
import { signUpOnWebsite } from './ripple-schema.ts';

/** Privileges of an ordinary active user: UserPublic + UserNormal. */
export const ACTIVE = 3;

export interface TestUser {
  id: number;
  username: string;
  password: string;
}

export interface Harness {
  /** the backend the harness runs on */
  backend: Backend;
  app: FastifyInstance;
  store: Store;
  config: Config;
  database: TestDatabase;
  /**
   * In place (`ripple`): a connection of the family's programs to the family database, for their SQL;
   * undefined on the other backends.
   */
  family: Connection | undefined;
  /** Requests under {base_url}/v1 (pass a path like '/tokens'). */
  api(options: InjectOptions & { path: string }): Promise<LightMyRequestResponse>;
  /**
   * A user with a password (bcrypt of its MD5 hex, version 2 unless given; `passwordHash` stores one
   * already made), written into the users table: by tokend's repository, or in place as the family's
   * website signs one up (hanayo's INSERT).
   */
  createUser(
    user?: Partial<TestUser> & { privileges?: number; passwordVersion?: number; passwordHash?: string },
  ): Promise<TestUser>;
  /**
   * A token row written straight to the database: a fixture, so no limit() and no cap apply (tests use it
   * to stand for tokens stored before their owner was demoted). Tokens made by tokend go through mintToken.
   */
  createToken(
    userId: number,
    options?: { privileges?: number; description?: string; private?: boolean },
  ): Promise<{ id: number; secret: string }>;
  setUserPrivileges(userId: number, privileges: number): Promise<void>;
}

const hasher = new PasswordHasher({ cost: 4, concurrency: 4 });
let userCounter = 0;

export interface OpenHarness {
  harness: Harness;
  /** Closes the app and drops its database. */
  close(): Promise<void>;
}

/** A harness whose closing is the caller's: build() and sharedHarness() register `close` with node:test. */
export async function openHarness(
  backend: Backend,
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<OpenHarness> {
  const database = await createMigratedDatabase(backend);
  const family = backend === 'ripple' ? await createConnection({ uri: database.url }) : undefined;
  const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4', ...env });
  config.database = database.config;
  // A copy of the migrated template: the check for pending migrations at opening has nothing to find.
  const store = await openStore(database.config, { migrate: false });
  const app = await buildApp(config, { store, ...options });
  await app.ready();
  const close = async () => {
    await app.close();
    await family?.end();
    await database.drop();
  };
  const base = `${config.basePath}/v1`;
  const harness: Harness = {
    backend,
    app,
    store,
    config,
    database,
    family,
    api: ({ path, ...rest }) => app.inject({ ...rest, url: `${base}${path}` }),
    async createUser(user = {}) {
      userCounter++;
      const username = user.username ?? `user${userCounter}_${Math.random().toString(36).slice(2, 8)}`;
      const password = user.password ?? `pw-${userCounter}`;
      if (family !== undefined) {
        const id = await signUpOnWebsite(family, {
          id: user.id,
          username,
          password,
          privileges: user.privileges ?? ACTIVE,
          passwordVersion: user.passwordVersion ?? CURRENT_PASSWORD_VERSION,
          passwordHash: user.passwordHash,
        });
        return { id, username, password };
      }
      const id = await insertUser(store.db, {
        id: user.id,
        username,
        passwordHash: user.passwordHash ?? (await hasher.hash(password)),
        passwordVersion: user.passwordVersion ?? CURRENT_PASSWORD_VERSION,
        privileges: user.privileges ?? ACTIVE,
        now: nowSeconds(),
      });
      return { id, username, password };
    },
    async createToken(userId, o = {}) {
      const secret = newTokenSecret();
      const id = await insertToken(store.db, {
        userId,
        privileges: o.privileges ?? 0,
        description: o.description ?? '',
        private: o.private ?? false,
        now: nowSeconds(),
        tokenHash: hashTokenSecret(secret),
      });
      return { id, secret };
    },
    async setUserPrivileges(userId, privileges) {
      // in place as the family's admin panel writes it
      if (family !== undefined)
        return void (await family.query('UPDATE users SET privileges = ? WHERE id = ?', [
          privileges,
          userId,
        ]));
      await store.db.updateTable('users').set({ privileges }).where('id', '=', userId).execute();
    },
  };
  return { harness, close };
}

/** An app on a fresh database for test `t`, closed (and the database dropped) after it. */
export async function build(
  t: TestContext,
  dialect: Backend,
  env: Record<string, string> = {},
  options: BuildOptions = {},
): Promise<Harness> {
  const { harness, close } = await openHarness(dialect, env, options);
  t.after(close);
  return harness;
}

/**
 * One harness for every test of a describe block: a fresh database per block instead of per test, for
 * tests that do not disturb one another (each makes its own users and tokens). Call inside describe();
 * the returned function gives the block's harness inside its tests.
 */
export function sharedHarness(
  dialect: Backend,
  env: Record<string, string> = {},
  options: BuildOptions = {},
): () => Harness {
  let opened: OpenHarness | undefined;
  before(async () => {
    // Every test of the block logs in from one address: the per-address limit would count them together.
    opened = await openHarness(dialect, { LOGIN_IP_RATE_LIMIT: '1000000', ...env }, options);
  });
  after(async () => {
    await opened?.close();
  });
  return () => {
    if (!opened) throw new Error('the shared harness is not built yet');
    return opened.harness;
  };
}

/** The parsed JSON body of a response. */
export const body = (r: LightMyRequestResponse): Record<string, unknown> =>
  r.json() as Record<string, unknown>;

/** The METRICS_TOKEN of tests that read /metrics, which is off without one: build(t, dialect, WITH_METRICS). */
export const WITH_METRICS = { METRICS_TOKEN: 'test-metrics-token-0123456789' };

/** GET /metrics with the harness's METRICS_TOKEN: the Prometheus text (fails the test on another status). */
export async function scrapeMetrics(h: Harness): Promise<string> {
  const token = h.config.metricsToken;
  if (token === undefined) throw new Error('build the harness with WITH_METRICS to read /metrics');
  const r = await h.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  if (r.statusCode !== 200) throw new Error(`/metrics answered ${r.statusCode}: ${r.body}`);
  return r.body;
}

/**
 * Where a test runs one of tokend's migrations by hand (its `up` or `down`) on a harness's database: the
 * store's dialect and a handle as the migrator has it (in place: the in-place migrations' plugin, which
 * names tokend's own tables with their prefix and makes no foreign key to the family's tables).
 */
export function migrationTarget(h: Harness): { dialect: Dialect; db: Db } {
  if (h.backend !== 'ripple') return { dialect: h.backend, db: h.store.db };
  return { dialect: 'mysql', db: h.store.db.withoutPlugins().withPlugin(inPlaceMigrationTables()) };
}
