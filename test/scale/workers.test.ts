// WORKERS=2 without Redis: the workers share one login limit through the primary process, a worker that
// dies is replaced without losing the connections that come after its death, and SIGTERM drains every
// worker before the primary exits 0.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from '../helpers/databases.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { PasswordHasher, CURRENT_PASSWORD_VERSION } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { http, request, startTokend, type TokendProcess } from '../helpers/real-server.ts';
import { within } from '../helpers/waiting.ts';

const hasher = new PasswordHasher({ cost: 4, concurrency: 2 });

interface LogLine {
  msg?: string;
  pid?: number;
  worker?: number;
  role?: string;
  method?: string;
  url?: string;
}

const logLines = (server: TokendProcess): LogLine[] =>
  server
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });

const listeningWorkers = (server: TokendProcess): number[] =>
  logLines(server)
    .filter((l) => l.role === 'primary' && l.msg === 'worker listening')
    .map((l) => l.worker as number);

async function waitFor(what: string, server: TokendProcess, done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(done(), `${what}; output so far:\n${server.output()}`);
}

const cases: Array<[string, string[], Record<string, string>]> = [
  ['WORKERS=2 through npm start (bin/tokend.js serve)', ['bin/tokend.js', 'serve'], { WORKERS: '2' }],
  ['tokend serve --workers 2', ['src/cli/main.ts', 'serve', '--workers', '2'], {}],
  // Redis set but unreachable: each worker's insurance limiter counts through the primary, so the
  // machine as a whole still allows 5.
  [
    'WORKERS=2 with an unreachable Redis',
    ['src/server.ts'],
    { WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:1' },
  ],
];

for (const [how, args, extraEnv] of cases) {
  describe(how, () => {
    it(
      'holds the login limit across workers, replaces a dead worker, drains on SIGTERM',
      { timeout: 120_000 },
      async (t) => {
        const database = await createTestDatabase('sqlite');
        t.after(() => database.drop());
        const metricsToken = 'workers-metrics-token-0123456789';
        const env = {
          DATABASE_URL: database.url,
          LOG_LEVEL: 'info',
          METRICS_TOKEN: metricsToken,
          ...extraEnv,
        };
        const server = await startTokend(env, args);
        t.after(async () => {
          await server.stop();
        });
        await waitFor('both workers listen', server, () => listeningWorkers(server).length === 2);

        const store = await openStore(database.config, { migrate: false });
        t.after(() => store.close());
        const userId = await insertUser(store.db, {
          username: 'dora',
          passwordHash: await hasher.hash('dora-pw'),
          passwordVersion: CURRENT_PASSWORD_VERSION,
          privileges: 3,
          now: nowSeconds(),
        });

        // Login attempts, 12 at a time, each on a new connection. Each worker accepts from the shared socket,
        // so the kernel decides which one takes a connection and a whole batch may go to one worker: batches
        // go on until both workers have had some attempts (a worker logs each request it answers).
        const attemptsAt = () =>
          logLines(server).filter(
            (l) => l.msg === 'request completed' && l.method === 'POST' && l.url === '/api/v1/tokens',
          );
        const statuses: number[] = [];
        for (let batch = 1; batch <= 6; batch++) {
          const answers = await Promise.all(
            Array.from({ length: 12 }, (_, i) =>
              request(`${server.baseUrl}/tokens`, {
                method: 'POST',
                headers: { connection: 'close' },
                json: { id: userId, password: i % 2 === 0 ? 'dora-pw' : 'wrong' },
              }),
            ),
          );
          statuses.push(...answers.map((r) => r.status));
          await waitFor('every attempt is logged', server, () => attemptsAt().length === statuses.length);
          if (new Set(attemptsAt().map((l) => l.pid)).size === 2) break;
        }
        t.diagnostic(`login statuses over 2 workers: ${statuses.join(',')}`);
        assert.equal(
          new Set(attemptsAt().map((l) => l.pid)).size,
          2,
          'both workers had some of the attempts',
        );
        // 5 in all, whichever worker counted them.
        assert.equal(statuses.filter((s) => s !== 429).length, 5, statuses.join(','));
        assert.ok(
          statuses.every((s) => s === 200 || s === 403 || s === 429),
          statuses.join(','),
        );

        // Whichever worker takes a scrape answers it with its own figures, and only with the token.
        for (let i = 0; i < 4; i++) {
          const scrape = await http({
            port: server.port,
            path: '/metrics',
            headers: { authorization: `Bearer ${metricsToken}`, connection: 'close' },
          });
          assert.equal(scrape.status, 200, scrape.body);
          assert.match(scrape.body, /^tokend_login_attempts_total\{outcome="\w+"\} \d+$/m);
        }
        const anonymous = await http({
          port: server.port,
          path: '/metrics',
          headers: { connection: 'close' },
        });
        assert.equal(anonymous.status, 401, anonymous.body);

        // A worker that dies is replaced, and the service keeps answering.
        const [victim] = listeningWorkers(server);
        process.kill(victim!, 'SIGKILL');
        await waitFor('a replacement worker listens', server, () => listeningWorkers(server).length === 3);
        const after = await request(`${server.baseUrl}/tokens`, {
          method: 'POST',
          json: { id: userId, password: 'x' },
        });
        assert.equal(after.status, 429, 'the primary still remembers the count');

        if (extraEnv.REDIS_URL !== undefined) {
          // Logged once per worker for the whole outage, not once per attempt.
          const fallbacks = logLines(server).filter((l) =>
            /Redis unreachable, counting/.test(l.msg ?? ''),
          ).length;
          assert.ok(fallbacks >= 1 && fallbacks <= 3, `fallback logged ${fallbacks} times`);
        }
        assert.equal(await server.stop(), 0, server.output());
        assert.ok(
          logLines(server).some((l) => l.role === 'primary' && l.msg === 'all workers drained'),
          server.output(),
        );
      },
    );
  });
}

describe('WORKERS=2: a worker killed between requests of a stream', () => {
  it(
    'loses no connection: every request that arrives after the kill is answered by a live worker',
    { timeout: 120_000 },
    async (t) => {
      const database = await createTestDatabase('sqlite');
      t.after(() => database.drop());
      const server = await startTokend({ DATABASE_URL: database.url, LOG_LEVEL: 'info', WORKERS: '2' });
      t.after(async () => {
        await server.stop();
      });
      await waitFor('both workers listen', server, () => listeningWorkers(server).length === 2);

      // Each request on a connection of its own, so each is given to a worker anew; a hang shows as an error.
      const ping = async (): Promise<string> => {
        try {
          const r = await within(
            15_000,
            'GET /ping',
            http({ port: server.port, path: '/api/v1/ping', headers: { connection: 'close' } }),
          );
          return r.status === 200 && (JSON.parse(r.body) as { code?: unknown }).code === 200
            ? 'answered'
            : `status ${r.status}: ${r.body}`;
        } catch (err) {
          return (err as { code?: string }).code ?? String(err);
        }
      };
      const outcomes: string[] = [];
      const wave = async () => {
        outcomes.push(...(await Promise.all(Array.from({ length: 16 }, ping))));
      };

      // The kill falls between two waves, when no request is in a worker's hands: a request the killed
      // worker had already taken dies with it, which no server can prevent. Whatever comes after the kill,
      // before and while the primary notices the death and starts a replacement, must be answered.
      const killed: number[] = [];
      for (let round = 1; round <= 2; round++) {
        await wave();
        await wave();
        const victim = listeningWorkers(server).find((pid) => !killed.includes(pid));
        assert.ok(victim !== undefined, server.output());
        process.kill(victim, 'SIGKILL');
        killed.push(victim);
        await wave();
        await wave();
        await waitFor(
          'a replacement worker listens',
          server,
          () => listeningWorkers(server).length === 2 + round,
        );
      }
      await wave();
      const failed = outcomes.filter((o) => o !== 'answered');
      assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests were not answered`);
      assert.equal(outcomes.length, 16 * 9);
    },
  );
});
