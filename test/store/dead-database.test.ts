// A database that stops answering, or goes away, costs a request a 500 envelope after DB_TIMEOUT_MS,
// never a request that hangs. A TCP proxy between tokend and the real server plays the failing server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { seedUsers, type SeedUser } from '../helpers/seed-users.ts';
import { TcpProxy } from '../helpers/real-server.ts';

for (const dialect of DIALECTS.filter((d) => d !== 'sqlite')) {
  describe(`a failing database answers 500 [${dialect}]`, () => {
    for (const fault of ['hang', 'refuse'] as const) {
      it(
        `when the server ${fault === 'hang' ? 'stops answering' : 'goes away'}`,
        { timeout: 30_000 },
        async (t) => {
          const database = await createTestDatabase(dialect);
          const direct = new URL(database.url);
          const proxy = new TcpProxy(Number(direct.port), direct.hostname);
          await proxy.start();
          const proxied = new URL(database.url);
          proxied.port = String(proxy.port);
          const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4', DB_TIMEOUT_MS: '500' });
          if (database.config.kind === 'sqlite') throw new Error('a server database');
          config.database = { ...database.config, url: proxied.toString() };
          const app = await buildApp(config);
          t.after(async () => {
            await proxy.close();
            await app.close();
            await database.drop();
          });
          const [{ id, password }] = (await seedUsers(database.config, 1)) as [SeedUser];
          const login = () =>
            app.inject({ method: 'POST', url: '/api/v1/tokens', payload: { id, password } });
          const ok = await login();
          assert.equal(ok.statusCode, 200, ok.body);
          const token = (ok.json() as { token: string }).token;

          if (fault === 'hang') proxy.freeze();
          else await proxy.cut();

          for (const response of [
            await login(),
            await app.inject({
              method: 'GET',
              url: '/api/v1/tokens/self',
              headers: { 'x-ripple-token': token },
            }),
          ]) {
            assert.equal(response.statusCode, 500, response.body);
            const body = response.json() as { code: number; message: string };
            assert.equal(body.code, 500);
            assert.match(body.message, /try again/i);
            assert.doesNotMatch(body.message, /timeout|ECONN|database/i);
          }
        },
      );
    }
  });
}
