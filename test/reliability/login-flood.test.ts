// A login flood cannot queue unbounded bcrypt work: beyond PASSWORD_QUEUE_MAX waiting checks a login is
// answered 503 with Retry-After at once, and a check whose client hung up is dropped before it runs. Nor
// can a flood from many addresses keep a quieter address out of the queue: the address with the fewest
// login attempts in the window goes first, and takes the place of the busiest address's check when full.
// A login the queue refuses (or drops, its client gone) had no password checked: it is not counted
// against the login limits, in any of their stores, so a flood cannot spend an honest user's budget. It
// still ranks its address: an address that keeps sending while refused stands behind a quieter one.
// A check also ranks by the attempts against its account from every address: a flood against one account
// from many fresh addresses stands behind a user who tries her own account.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { build, body, scrapeMetrics, WITH_METRICS, type Harness } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { PasswordHasher } from '../../src/users/passwords.ts';
import { eventually, sleep } from '../helpers/waiting.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';
import { createLoginLimiter } from '../../src/auth/login-limiter.ts';

/** The stored hashes slowUsers gives, made once per password and cost (a cost-13 hash takes most of a second). */
const slowHashes = new Map<string, Promise<string>>();

/**
 * Users whose stored hash has cost 12 (~0.25 s a check) by default, so that checks sent together
 * certainly overlap (each login reads its user before it queues: a quicker check could end before the
 * last of them arrives), or another cost (each step doubles the time): 13 (~0.5 s) for the check that holds
 * the only bcrypt thread while a test acts, 10 (~0.06 s) for a flood, whose volume keeps the queue full
 * whatever one check takes.
 */
async function slowUsers(h: Harness, count: number, password: string, cost = 12): Promise<number[]> {
  const key = `${cost}:${password}`;
  if (!slowHashes.has(key)) slowHashes.set(key, new PasswordHasher({ cost, concurrency: 1 }).hash(password));
  const hash = await slowHashes.get(key)!;
  const ids: number[] = [];
  for (let i = 0; i < count; i++)
    ids.push(
      (
        await h.createUser({
          username: `flood_${i}_${Math.random().toString(36).slice(2, 8)}`,
          password,
          passwordHash: hash,
        })
      ).id,
    );
  return ids;
}

async function loginOutcomes(h: Harness): Promise<Record<string, number>> {
  const text = await scrapeMetrics(h);
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^tokend_login_attempts_total\{outcome="([^"]+)"\} (\d+)/gm))
    out[m[1] as string] = Number(m[2]);
  return out;
}

/**
 * Listens on a real port and returns a function that sends one login (user id, `password`) on a socket
 * of its own and hands back the socket, unread: a test hangs the client up by destroying it.
 */
async function rawLoginSender(h: Harness, password: string): Promise<(id: number) => Socket> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  return (id) => {
    const payload = JSON.stringify({ id, password });
    const socket = connect(address.port, '127.0.0.1');
    socket.write(
      `POST ${h.config.basePath}/v1/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
    return socket;
  };
}

for (const dialect of DIALECTS)
  describe(`login flood [${dialect}]`, () => {
    it('answers 503 with Retry-After at once beyond PASSWORD_QUEUE_MAX waiting checks; stores nothing', async (t) => {
      const h = await build(t, dialect, { BCRYPT_CONCURRENCY: '1', PASSWORD_QUEUE_MAX: '2' });
      const ids = await slowUsers(h, 8, 'pw');
      const answers = await Promise.all(
        ids.map((id) => h.api({ method: 'POST', path: '/tokens', payload: { id, password: 'pw' } })),
      );
      const codes = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [200, 200, 200, 503, 503, 503, 503, 503]);
      for (const r of answers.filter((a) => a.statusCode === 503)) {
        assert.equal(body(r).code, 503);
        assert.ok(Number(r.headers['retry-after']) >= 1);
        assert.equal(body(r).token, undefined);
      }
      const tokens = await h.store.db.selectFrom('tokens').select('id').execute();
      assert.equal(tokens.length, 3);
    });

    it('answers a quiet address while many addresses keep the queue full', async (t) => {
      // The flood stays within its login limits (it spreads over users and time); here the limits are
      // simply out of its reach, so that every flood attempt reaches the password queue.
      const h = await build(t, dialect, {
        BCRYPT_CONCURRENCY: '1',
        PASSWORD_QUEUE_MAX: '8',
        LOGIN_RATE_LIMIT: '1000000',
        LOGIN_IP_RATE_LIMIT: '1000000',
      });
      const ids = await slowUsers(h, 41, 'pw', 10);
      const honest = ids.pop()!;
      const attempts = Array<number>(40).fill(0);
      const answers: Record<number, number> = {};
      const inFlight = new Set<Promise<unknown>>();
      // 40 addresses, each sending a login every 200 ms without waiting for the answers (a flood does
      // not queue politely behind its own attempts).
      const flood = setInterval(() => {
        for (let i = 0; i < attempts.length; i++) {
          attempts[i]!++;
          const sent = h
            .api({
              method: 'POST',
              path: '/tokens',
              remoteAddress: `198.51.100.${i + 1}`,
              payload: { id: ids[i], password: 'pw' },
            })
            .then((r) => (answers[r.statusCode] = (answers[r.statusCode] ?? 0) + 1));
          inFlight.add(sent);
          void sent.finally(() => inFlight.delete(sent));
        }
      }, 200);
      try {
        // The flood fills the queue (8 waiting behind the one check running) before the other address asks.
        assert.ok(
          await eventually(100, 20, async () => (answers[503] ?? 0) >= 100),
          `the flood did not fill the queue: ${JSON.stringify(answers)}`,
        );
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) {
          const r = await h.api({
            method: 'POST',
            path: '/tokens',
            remoteAddress: '203.0.113.5',
            payload: { id: honest, password: 'pw' },
          });
          statuses.push(r.statusCode);
        }
        assert.deepEqual(statuses, [200, 200, 200, 200, 200], JSON.stringify(answers));
      } finally {
        clearInterval(flood);
        await Promise.all(inFlight);
      }
      // The flood was being refused all along: the queue stayed full.
      assert.ok((answers[503] ?? 0) > 100, JSON.stringify(answers));
    });

    it('drops the checks of clients that hung up before their turn', async (t) => {
      const h = await build(t, dialect, { BCRYPT_CONCURRENCY: '1', ...WITH_METRICS });
      const ids = await slowUsers(h, 8, 'pw');
      const send = await rawLoginSender(h, 'pw');
      // One check holds the only bcrypt slot; six more queue behind it and their clients hang up.
      const first = h.api({ method: 'POST', path: '/tokens', payload: { id: ids[0], password: 'pw' } });
      await new Promise((r) => setTimeout(r, 20));
      const quitters = ids.slice(1, 7).map(send);
      await new Promise((r) => setTimeout(r, 50));
      for (const s of quitters) s.destroy();
      assert.equal((await first).statusCode, 200);
      // A login after them: it is answered, and only it and the first ran bcrypt.
      const later = await h.api({ method: 'POST', path: '/tokens', payload: { id: ids[7], password: 'pw' } });
      assert.equal(later.statusCode, 200);
      const outcomes = await loginOutcomes(h);
      assert.equal(outcomes.ok, 2, JSON.stringify(outcomes));
      assert.equal(outcomes['503'], 6, JSON.stringify(outcomes));
      const tokens = await h.store.db.selectFrom('tokens').select('id').execute();
      assert.equal(tokens.length, 2);
    });

    it('frees the places of hung-up clients for a login that finds the queue full', async (t) => {
      const h = await build(t, dialect, {
        BCRYPT_CONCURRENCY: '1',
        PASSWORD_QUEUE_MAX: '3',
        ...WITH_METRICS,
      });
      const ids = await slowUsers(h, 5, 'pw');
      const send = await rawLoginSender(h, 'pw');
      // One check holds the only bcrypt slot; three more fill the queue and their clients hang up.
      const first = h.api({ method: 'POST', path: '/tokens', payload: { id: ids[0], password: 'pw' } });
      await new Promise((r) => setTimeout(r, 20));
      const quitters = ids.slice(1, 4).map(send);
      await new Promise((r) => setTimeout(r, 50));
      for (const s of quitters) s.destroy();
      await new Promise((r) => setTimeout(r, 20));
      // A login while the first check still runs: the queue is full of places nobody waits for.
      const live = h.api({ method: 'POST', path: '/tokens', payload: { id: ids[4], password: 'pw' } });
      assert.equal((await first).statusCode, 200);
      assert.equal((await live).statusCode, 200, (await live).body);
      const outcomes = await loginOutcomes(h);
      assert.equal(outcomes.ok, 2, JSON.stringify(outcomes));
      assert.equal(outcomes['503'], 3, JSON.stringify(outcomes));
    });
  });

/** Where the login limits count: each store gives back the attempts the password queue refused. */
const STORES: Array<{ name: string; env: () => Record<string, string>; skip: string | undefined }> = [
  { name: 'in memory', env: () => ({}), skip: undefined },
  {
    name: 'in Redis',
    env: () => ({ REDIS_URL, REDIS_KEY_PREFIX: uniqueRedisPrefix() }),
    skip: await redisSkipReason(),
  },
  {
    // Nothing listens on port 1 of the loopback: every count is the insurance limiter's.
    name: 'in the insurance limiter, Redis unreachable',
    env: () => ({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_KEY_PREFIX: uniqueRedisPrefix() }),
    skip: undefined,
  },
];

/** A login's status from `address` (a TEST-NET address of the flood, or the honest user's). */
const loginFrom = (h: Harness, address: string, id: number, password: string) =>
  h.api({ method: 'POST', path: '/tokens', remoteAddress: address, payload: { id, password } });

/**
 * Three checks from three flood addresses: the slowest (cost 13) runs on the only bcrypt thread, and two
 * more (`flooders`) fill the queue behind it (PASSWORD_QUEUE_MAX=2). Resolves once they wait, with the
 * running check just begun; their answers come with `done`.
 */
async function fillQueue(h: Harness, slowest: number, flooders: number[]) {
  const running = loginFrom(h, '198.51.100.1', slowest, 'pw');
  assert.ok(
    await eventually(200, 10, async () => h.app.tokend.passwords.running === 1),
    'the first check did not start',
  );
  const waiting = flooders.map((id, i) => loginFrom(h, `198.51.100.${i + 2}`, id, 'pw'));
  assert.ok(
    await eventually(200, 10, async () => h.app.tokend.passwords.queued === 2),
    'the flood did not fill the queue',
  );
  return { done: Promise.all([running, ...waiting]) };
}

const HONEST = '203.0.113.7';

for (const store of STORES)
  for (const dialect of DIALECTS)
    describe(`logins the password queue refuses, counted ${store.name} [${dialect}]`, () => {
      it(
        'spend neither login budget: the honest user signs in once the queue drains',
        { skip: store.skip },
        async (t) => {
          const h = await build(t, dialect, {
            BCRYPT_CONCURRENCY: '1',
            PASSWORD_QUEUE_MAX: '2',
            LOGIN_RATE_LIMIT: '3',
            LOGIN_IP_RATE_LIMIT: '6',
            ...store.env(),
          });
          const [slowest] = await slowUsers(h, 1, 'pw', 13);
          const flooders = await slowUsers(h, 2, 'pw');
          const [a, b] = [await h.createUser(), await h.createUser()];
          const flood = await fillQueue(h, slowest!, flooders);
          // More retries than either limit allows, each refused by the full queue with Retry-After.
          const refused = [];
          for (let i = 0; i < 8; i++) refused.push(await loginFrom(h, HONEST, a.id, a.password));
          assert.deepEqual(
            refused.map((r) => r.statusCode),
            Array<number>(8).fill(503),
          );
          for (const r of refused) assert.ok(Number(r.headers['retry-after']) >= 1);
          assert.deepEqual(
            (await flood.done).map((r) => r.statusCode),
            [200, 200, 200],
          );
          // The queue has drained: the whole per-user budget (3) and the per-address budget (6) are left.
          const checked = [];
          for (const user of [a, a, a, b, b, b])
            checked.push(await loginFrom(h, HONEST, user.id, user.password));
          assert.deepEqual(
            checked.map((r) => r.statusCode),
            [200, 200, 200, 200, 200, 200],
            checked.map((r) => r.body).join('\n'),
          );
          // Attempts that were checked count, successes too: the address's budget is now spent.
          const c = await h.createUser();
          assert.equal((await loginFrom(h, HONEST, c.id, c.password)).statusCode, 429);
        },
      );

      it('are not counted when the client hung up before its check ran', { skip: store.skip }, async (t) => {
        const h = await build(t, dialect, {
          BCRYPT_CONCURRENCY: '1',
          LOGIN_RATE_LIMIT: '3',
          ...WITH_METRICS,
          ...store.env(),
        });
        const [slow] = await slowUsers(h, 1, 'pw', 13);
        const a = await h.createUser();
        await h.app.listen({ port: 0, host: '127.0.0.1' });
        const address = h.app.server.address();
        assert.ok(address && typeof address === 'object');
        // One slow check holds the only bcrypt thread; the honest user's three logins (its whole budget)
        // wait behind it, from the loopback over real sockets, and their client hangs up.
        const running = loginFrom(h, '198.51.100.1', slow!, 'pw');
        assert.ok(await eventually(200, 10, async () => h.app.tokend.passwords.running === 1));
        const payload = JSON.stringify({ id: a.id, password: a.password });
        const quitters = [0, 1, 2].map(() => {
          const socket = connect(address.port, '127.0.0.1');
          socket.write(
            `POST ${h.config.basePath}/v1/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
          );
          return socket;
        });
        assert.ok(
          await eventually(200, 10, async () => h.app.tokend.passwords.queued === 3),
          'the hung-up logins did not queue',
        );
        for (const s of quitters) s.destroy();
        assert.equal((await running).statusCode, 200);
        // Each was dropped unrun at its turn (answered 503, which nobody reads).
        assert.ok(
          await eventually(200, 10, async () => (await loginOutcomes(h))['503'] === 3),
          JSON.stringify(await loginOutcomes(h)),
        );
        // The same user from the same address: the budget is whole.
        const r = await loginFrom(h, '127.0.0.1', a.id, a.password);
        assert.equal(r.statusCode, 200, r.body);
      });
    });

for (const store of STORES.slice(0, 2))
  describe(`an attempt given back late, counted ${store.name}`, () => {
    it(
      'is not given back in the next window, where it would be an attempt nobody made',
      { skip: store.skip },
      async (t) => {
        const env = store.env();
        const limiter = await createLoginLimiter(
          {
            points: 1,
            addressPoints: 1000,
            durationS: 1,
            redisUrl: env.REDIS_URL,
            redisKeyPrefix: env.REDIS_KEY_PREFIX ?? '',
          },
          { warn: () => {}, info: () => {} },
        );
        t.after(() => limiter.close());
        const counted = await limiter.attempt(7, '192.0.2.1');
        assert.ok(counted.allowed);
        await sleep(1100);
        // The window the attempt was counted in is over: giving it back now must change nothing.
        await counted.giveBack();
        assert.equal((await limiter.attempt(7, '192.0.2.1')).allowed, true);
        assert.equal((await limiter.attempt(7, '192.0.2.1')).allowed, false, 'one attempt per window');
      },
    );
  });

/** A fresh address for each flood login (10.0.0.0/8): no address ever comes near its login limits. */
const floodAddress = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

for (const store of STORES.slice(0, 2))
  for (const dialect of DIALECTS)
    describe(`a flood against one account from many addresses, counted ${store.name} [${dialect}]`, () => {
      it(
        'ranks behind a user who tries her own account: she signs in while it goes on',
        { skip: store.skip },
        async (t) => {
          // The default login limits: each flood address makes one attempt, far within both.
          const h = await build(t, dialect, {
            BCRYPT_CONCURRENCY: '1',
            PASSWORD_QUEUE_MAX: '8',
            ...store.env(),
          });
          const [bob] = await slowUsers(h, 1, 'bob pw', 10);
          const [alice] = await slowUsers(h, 1, 'alice pw', 10);
          let sentCount = 0;
          const answers: Record<number, number> = {};
          const inFlight = new Set<Promise<unknown>>();
          // 40 logins to bob with wrong passwords every 200 ms, each from an address never seen before,
          // without waiting for the answers.
          const flood = setInterval(() => {
            for (let i = 0; i < 40; i++) {
              const n = ++sentCount;
              const sent = loginFrom(h, floodAddress(n), bob!, `wrong ${n}`).then(
                (r) => (answers[r.statusCode] = (answers[r.statusCode] ?? 0) + 1),
              );
              inFlight.add(sent);
              void sent.finally(() => inFlight.delete(sent));
            }
          }, 200);
          let refusedWhenIn = 0;
          try {
            assert.ok(
              await eventually(100, 20, async () => (answers[503] ?? 0) >= 100),
              `the flood did not fill the queue: ${JSON.stringify(answers)}`,
            );
            // Alice, on her own address, retries as Retry-After says until she is in (five tries at most).
            const statuses: number[] = [];
            for (let i = 0; i < 5 && statuses.at(-1) !== 200; i++) {
              const r = await loginFrom(h, HONEST, alice!, 'alice pw');
              statuses.push(r.statusCode);
              if (r.statusCode === 503) await sleep(Number(r.headers['retry-after']) * 1000);
            }
            refusedWhenIn = answers[503] ?? 0;
            assert.equal(statuses.at(-1), 200, `${statuses.join(',')} ${JSON.stringify(answers)}`);
            // The flood still fills the queue after she is in: it is refused on.
            assert.ok(
              await eventually(100, 20, async () => (answers[503] ?? 0) > refusedWhenIn + 40),
              JSON.stringify(answers),
            );
          } finally {
            clearInterval(flood);
            await Promise.all(inFlight);
          }
          // Only the flood's wrong passwords were checked besides hers: nothing else answered.
          assert.deepEqual(Object.keys(answers).sort(), ['403', '503'], JSON.stringify(answers));
        },
      );
    });
