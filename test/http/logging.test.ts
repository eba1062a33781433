// No secret reaches a log line: token secrets by every transport, passwords, and the secret a creation returns.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import type { FastifyLoggerOptions, InjectOptions } from 'fastify';

/** The app's own logger options at trace level, writing into an array. */
function capturingLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const options = loggerOptions('trace') as FastifyLoggerOptions;
  return { lines, logger: { ...options, stream } };
}

for (const dialect of DIALECTS) {
  describe(`logging [${dialect}]`, () => {
    it('never writes a token secret or a password, also when requests fail', async (t) => {
      const { lines, logger } = capturingLogger();
      const h = await build(t, dialect, { LOG_LEVEL: 'trace' }, { logger });
      const password = 'correct horse battery staple';
      const user = await h.createUser({ password });
      const created = await h.api({ method: 'POST', path: '/tokens', payload: { id: user.id, password } });
      assert.equal(created.statusCode, 200);
      const secret = String(body(created).token);
      await h.api({ method: 'POST', path: '/tokens', payload: { id: user.id, password: `${password}!` } });

      const transports: Array<Pick<InjectOptions, 'headers' | 'query' | 'cookies'>> = [
        { headers: { 'x-ripple-token': secret } },
        { headers: { authorization: `Bearer ${secret}` } },
        { query: { token: secret } },
        { query: { k: secret } },
        { cookies: { rt: secret } },
      ];
      for (const request of transports) {
        await h.api({ method: 'GET', path: '/tokens/self', ...request });
        await h.api({ method: 'GET', path: '/no/such/endpoint', ...request });
      }
      // failing requests log errors with their request attached
      await sql`ALTER TABLE tokens RENAME TO tokens_moved_away`.execute(h.store.db);
      for (const request of transports) {
        const r = await h.api({ method: 'GET', path: '/tokens', ...request });
        assert.equal(r.statusCode, 500);
      }
      await sql`ALTER TABLE tokens_moved_away RENAME TO tokens`.execute(h.store.db);

      const log = lines.join('');
      assert.ok(lines.length > 10, `the logger wrote (${lines.length} lines)`);
      assert.match(log, /request failed|"level":50/, 'the failures were logged');
      assert.ok(!log.includes(secret), 'a token secret was logged');
      assert.ok(!log.includes(password), 'a password was logged');
    });
  });
}
