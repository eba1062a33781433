// Database outage: tokend talks to PostgreSQL / MariaDB through a TCP proxy that the test cuts (every
// connection dropped, new ones refused: the server is down) or freezes (connections open but silent: the
// server hangs), then restores. Meanwhile requests answer a 500 envelope within 2 s and /health/ready
// says 503; once the database is back, tokend recovers without a restart.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { DIALECTS, dialectOf } from '../helpers/dialects.ts';
import { createMigratedDatabase } from '../helpers/databases.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { mintToken } from '../../src/auth/mint.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { TcpProxy } from '../helpers/real-server.ts';
import { eventually, within } from '../helpers/waiting.ts';
import { seedUsers } from '../helpers/seed-users.ts';

/** The bound: an answer within 2 s instead of hanging. */
const ANSWER_WITHIN_MS = 2000;

const SERVER_PORT = { postgres: 5432, mysql: 3306 } as const;

const OUTAGES = {
  down: 'the server is gone (connections dropped, new ones refused)',
  hung: 'the server hangs (connections open, nothing answers)',
} as const;

for (const dialect of DIALECTS.filter((d) => d !== 'sqlite')) {
  describe(`database outage [${dialect}]`, () => {
    for (const [outage, what] of Object.entries(OUTAGES))
      it(`${what}: prompt 500 envelopes and readiness 503, then recovery`, async (t) => {
        const database = await createMigratedDatabase(dialect);
        t.after(() => database.drop());
        const [user] = await seedUsers(database.config, 1);
        const proxy = new TcpProxy(SERVER_PORT[dialectOf(dialect) as 'postgres' | 'mysql']);
        await proxy.start();
        t.after(() => proxy.close());

        // A hung server is noticed after DB_TIMEOUT_MS; 1 s leaves room inside the 2 s bound.
        const config = loadConfig({
          LOG_LEVEL: 'silent',
          BCRYPT_COST: '4',
          LOGIN_RATE_LIMIT: '1000000',
          LOGIN_IP_RATE_LIMIT: '1000000',
          DB_TIMEOUT_MS: '1000',
        });
        if (database.config.kind === 'sqlite') throw new Error('a server database');
        config.database = { ...database.config, url: proxy.rewrite(database.url) };
        const store = await openStore(config.database, { poolSize: 4, timeoutMs: config.dbTimeoutMs });
        const app: FastifyInstance = await buildApp(config, { store });
        await app.ready();
        t.after(() => app.close());
        const { secret } = await mintToken(store.db, {
          layout: store.layout,
          userId: user!.id,
          cap: 'none',
          requested: 0,
          description: '',
          private: false,
          now: nowSeconds(),
          act: actOutsideRequest('cli', nowSeconds()),
        });

        const requests: Record<string, () => Promise<LightMyRequestResponse>> = {
          self: () => app.inject({ url: '/api/v1/tokens/self', headers: { 'x-ripple-token': secret } }),
          list: () => app.inject({ url: '/api/v1/tokens', headers: { 'x-ripple-token': secret } }),
          create: () =>
            app.inject({
              method: 'POST',
              url: '/api/v1/tokens',
              payload: { id: user!.id, password: user!.password },
            }),
          ready: () => app.inject({ url: '/health/ready' }),
        };
        const answer = (name: string) => within(ANSWER_WITHIN_MS, name, requests[name]!());

        for (const name of Object.keys(requests)) {
          const r = await answer(name);
          assert.equal(r.statusCode, 200, `${name} before the outage: ${r.body}`);
        }

        if (outage === 'down') await proxy.cut();
        else proxy.freeze();
        for (let round = 0; round < 2; round++) {
          const names = ['self', 'list', 'create'];
          const answers = await Promise.all(names.map(answer));
          for (const [i, name] of names.entries()) {
            const r = answers[i]!;
            assert.equal(r.statusCode, 500, `${name} during the outage: ${r.body}`);
            const envelope = r.json() as { code: number; message: string };
            assert.equal(envelope.code, 500);
            assert.match(envelope.message, /try again/i);
            assert.doesNotMatch(r.body, /ECONN|127\.0\.0\.1|postgres|mysql|sql/i, 'internals leak');
          }
          const ready = await answer('ready');
          assert.equal(ready.statusCode, 503, ready.body);
          assert.deepEqual((ready.json() as { checks: unknown }).checks, { database: 'failing' });
          const live = await app.inject({ url: '/health/live' });
          assert.equal(live.statusCode, 200, 'the process itself is alive');
        }

        await proxy.restore();
        const recovered = await eventually(40, 250, async () => {
          const rs = await Promise.all(Object.keys(requests).map(answer));
          return rs.every((r) => r.statusCode === 200);
        });
        assert.ok(recovered, 'tokend did not recover after the database returned');
        const self = await answer('self');
        assert.equal(self.statusCode, 200, self.body);
      });
  });
}
