// The events channel between processes: two tokend instances on one database and one Redis, the CLI
// beside them, and a subscriber that does what docs/security-log.md advises (re-read on each event). It
// never finds the state before the event: a ban or unban through the CLI is seen by /v1/ping, and a token
// revoked through the API is refused, the moment its event arrives. With WORKERS=2 in each of two
// instances sweeping one database, each expired token is announced exactly once. Event ids only grow.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { DIALECTS } from '../helpers/dialects.ts';
import { createMigratedDatabase } from '../helpers/databases.ts';
import { request, startTokend } from '../helpers/real-server.ts';
import { runCli } from '../helpers/cli.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';
import { eventually } from '../helpers/waiting.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { PasswordHasher, CURRENT_PASSWORD_VERSION } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { hashTokenSecret, newTokenSecret } from '../../src/auth/secret.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';
import { listEvents } from '../../src/auth/security-log.ts';

const hasher = new PasswordHasher({ cost: 4, concurrency: 2 });
const ACTIVE = 3;
const BAN_ROUNDS = 30;
const REVOCATIONS = 20;
const EXPIRED_TOKENS = 2500;

type Event = Record<string, unknown> & { id: number; kind: string };

/** Subscribes to the events channel; `onEvent` runs for each message, in order, one at a time. */
async function subscriber(prefix: string, onEvent: (e: Event) => Promise<void>) {
  const redis = new Redis(REDIS_URL);
  const seen: Event[] = [];
  let chain = Promise.resolve();
  redis.on('message', (_channel: string, message: string) => {
    const event = JSON.parse(message) as Event;
    seen.push(event);
    chain = chain.then(() => onEvent(event)).catch(() => undefined);
  });
  await redis.subscribe(`${prefix}events`);
  return {
    seen,
    settled: () => chain,
    close: () => redis.disconnect(),
  };
}

/** The ids in the order they came, each once: they must only grow (commit order). */
function assertIncreasing(events: readonly Event[]): void {
  const first = [...new Set(events.map((e) => e.id))];
  for (let i = 1; i < first.length; i++)
    assert.ok(first[i]! > first[i - 1]!, `event ids in the order received: ${first.join(',')}`);
}

for (const dialect of ['sqlite', 'mysql'] as const)
  describe(`events after the commit: two instances on one ${dialect} database`, async () => {
    const skip = !DIALECTS.includes(dialect)
      ? `the ${dialect} test server does not answer`
      : await redisSkipReason();

    it(
      `a subscriber that re-reads finds the new state: ${BAN_ROUNDS} bans and unbans through the CLI, ${REVOCATIONS} revocations through the API`,
      { skip, timeout: 300_000 },
      async (t) => {
        const database = await createMigratedDatabase(dialect);
        t.after(() => database.drop());
        const prefix = uniqueRedisPrefix();
        const env = {
          DATABASE_URL: database.url,
          REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          DB_POOL_SIZE: '4',
          LOGIN_RATE_LIMIT: '1000',
          TOKEN_CREATE_RATE_LIMIT: '1000',
        };
        // Migrated before the instances start (two processes migrating one SQLite file at once is not
        // what this test is about).
        const store = await openStore(database.config);
        t.after(() => store.close());
        // One after the other, each stopped after the test even when the other fails to start.
        const a = await startTokend(env);
        t.after(() => a.stop());
        const b = await startTokend(env);
        t.after(() => b.stop());
        const userId = await insertUser(store.db, {
          username: 'bob',
          passwordHash: await hasher.hash('bob-pw'),
          passwordVersion: CURRENT_PASSWORD_VERSION,
          privileges: ACTIVE,
          now: nowSeconds(),
        });
        const login = async () => {
          const r = await request(`${a.baseUrl}/tokens`, {
            method: 'POST',
            json: { id: userId, password: 'bob-pw', privileges: TokenPrivilege.ReadConfidential },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
          return { id: r.body.id as number, secret: r.body.token as string };
        };
        // The token the subscriber reads the user's privileges with (a banned owner's token still says who).
        const reader = await login();
        const secrets = new Map<number, string>();
        const tokenIdOf = async (secret: string) =>
          (await request(`${a.baseUrl}/tokens/self`, { headers: { 'x-ripple-token': secret } })).body
            .id as number;

        // What the subscriber found on re-reading, per event: the state it announces, or the one before.
        const privilegeReads: Array<{ announced: number; read: number }> = [];
        const revokedReads: Array<{ tokenId: number; status: number }> = [];
        const sub = await subscriber(prefix, async (event) => {
          if (event.kind === 'privileges.changed') {
            const announced = Number(/→ (\d+)$/.exec(String(event.reason))?.[1]);
            const ping = await request(`${b.baseUrl}/ping`, { headers: { 'x-ripple-token': reader.secret } });
            privilegeReads.push({ announced, read: ping.body.user_privileges as number });
          } else if (event.kind === 'token.revoked') {
            for (const tokenId of (event.token_ids as number[]) ?? []) {
              const secret = secrets.get(tokenId);
              if (secret === undefined) continue;
              const self = await request(`${b.baseUrl}/tokens/self`, {
                headers: { 'x-ripple-token': secret },
              });
              revokedReads.push({ tokenId, status: self.status });
            }
          }
        });
        t.after(() => sub.close());

        for (let round = 0; round < BAN_ROUNDS; round++) {
          // The CLI beside the two instances (in this test's process: neither instance's), as an operator
          // runs it: its own store and Redis connection, publishing what it committed.
          const r = await runCli(['user', round % 2 === 0 ? 'ban' : 'unban', '--user', 'bob'], { env });
          assert.equal(r.code, 0, r.stderr);
          // The next change waits until the subscriber has re-read after this one: the ban and the unban
          // alternate, so a re-read that came after the next change could not be told from a stale one.
          assert.ok(
            await eventually(200, 10, async () => {
              await sub.settled();
              return privilegeReads.length === round + 1;
            }),
            `the event of change ${round + 1} was re-read`,
          );
        }
        for (let i = 0; i < REVOCATIONS; i++) {
          const made = await login();
          const id = await tokenIdOf(made.secret);
          secrets.set(id, made.secret);
          // Alternately through each instance.
          const server = i % 2 === 0 ? a : b;
          const r = await request(`${server.baseUrl}/tokens/self`, {
            method: 'DELETE',
            headers: { 'x-ripple-token': made.secret },
          });
          assert.equal(r.status, 200, JSON.stringify(r.body));
        }
        assert.ok(
          await eventually(200, 50, async () => {
            await sub.settled();
            return privilegeReads.length === BAN_ROUNDS && revokedReads.length === REVOCATIONS;
          }),
          `every event arrived: ${privilegeReads.length} privilege changes, ${revokedReads.length} revocations`,
        );
        const stale = privilegeReads.filter((r) => r.read !== r.announced);
        assert.deepEqual(
          stale,
          [],
          `${BAN_ROUNDS - stale.length} of ${BAN_ROUNDS} re-reads saw the new state`,
        );
        assert.deepEqual(
          privilegeReads.map((r) => r.announced),
          Array.from({ length: BAN_ROUNDS }, (_, i) => (i % 2 === 0 ? 0 : ACTIVE)),
        );
        const live = revokedReads.filter((r) => r.status === 200);
        assert.deepEqual(
          live,
          [],
          `${REVOCATIONS - live.length} of ${REVOCATIONS} revoked tokens were refused`,
        );
        assertIncreasing(sub.seen);
      },
    );

    it(
      `announces each expired token once with WORKERS=2 in each of two instances sweeping`,
      { skip, timeout: 300_000 },
      async (t) => {
        const database = await createMigratedDatabase(dialect);
        t.after(() => database.drop());
        const prefix = uniqueRedisPrefix();
        const store = await openStore(database.config);
        t.after(() => store.close());
        const now = nowSeconds();
        const owners: number[] = [];
        for (let i = 0; i < 5; i++)
          owners.push(
            await insertUser(store.db, {
              username: `owner${i}`,
              passwordHash: 'x',
              passwordVersion: CURRENT_PASSWORD_VERSION,
              privileges: ACTIVE,
              now,
            }),
          );
        const rows = Array.from({ length: EXPIRED_TOKENS }, (_, i) => ({
          user_id: owners[i % owners.length]!,
          privileges: 0,
          description: '',
          token_hash: hashTokenSecret(newTokenSecret()),
          private: 0,
          last_updated: now - 100,
          created_at: now - 100,
          expires_at: now - 10,
        }));
        for (let i = 0; i < rows.length; i += 500)
          await store.db
            .insertInto('tokens')
            .values(rows.slice(i, i + 500))
            .execute();
        const sub = await subscriber(prefix, async () => undefined);
        t.after(() => sub.close());
        const env = {
          DATABASE_URL: database.url,
          REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          DB_POOL_SIZE: '4',
          WORKERS: '2',
          TOKEN_SWEEP_INTERVAL_S: '1',
        };
        // One after the other, each stopped after the test even when the other fails to start.
        const a = await startTokend(env);
        t.after(() => a.stop());
        const b = await startTokend(env);
        t.after(() => b.stop());
        const announced = () => sub.seen.filter((e) => e.kind === 'token.revoked');
        assert.ok(
          await eventually(400, 50, async () => announced().length >= EXPIRED_TOKENS),
          `${announced().length} of ${EXPIRED_TOKENS} expired tokens announced`,
        );
        // Every process keeps sweeping (each second): nothing more comes.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const perToken = new Map<number, number>();
        for (const e of announced())
          for (const id of e.token_ids as number[]) perToken.set(id, (perToken.get(id) ?? 0) + 1);
        assert.equal(perToken.size, EXPIRED_TOKENS);
        assert.deepEqual(
          [...perToken.values()].filter((n) => n !== 1),
          [],
          'each token announced once',
        );
        assert.equal(new Set(announced().map((e) => e.id)).size, announced().length, 'no id twice');
        assertIncreasing(sub.seen);
        // The log agrees: one expiry row per token.
        const logged = (await listEvents(store.db, { kind: 'token.revoked', limit: 100_000 })).filter(
          (e) => e.detail === 'expiry',
        );
        assert.equal(logged.length, EXPIRED_TOKENS);
        assert.equal(new Set(logged.map((e) => e.token_id)).size, EXPIRED_TOKENS);
        const left = await store.db.selectFrom('tokens').select('id').execute();
        assert.equal(left.length, 0);
      },
    );
  });
