// Structured JSON logs: every request's lines carry its id, echoed as X-Request-Id; secrets never appear.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { build, body } from '../helpers/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function buildLogged(t: TestContext, level = 'info') {
  const lines: string[] = [];
  const logger = {
    ...(loggerOptions(level) as Record<string, unknown>),
    stream: { write: (line: string) => void lines.push(line) },
  };
  const h = await build(t, 'sqlite', { LOG_LEVEL: level }, { logger });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { h, lines, records };
}

describe('request ids and structured logs', () => {
  it('keeps a short, safe X-Request-Id, echoes it, and tags every line of the request with it', async (t) => {
    const { h, records } = await buildLogged(t);
    const r = await h.api({ method: 'GET', path: '/ping', headers: { 'x-request-id': 'edge-42.a:b_c' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['x-request-id'], 'edge-42.a:b_c');
    const mine = records().filter((l) => l.reqId === 'edge-42.a:b_c');
    assert.deepEqual(
      mine.map((l) => l.msg),
      ['incoming request', 'request completed'],
    );
    for (const l of mine) {
      assert.equal(typeof l.level, 'number');
      assert.equal(typeof l.time, 'number');
    }
  });

  it('at level warn, quiet requests log nothing and a failing one still logs its error with its id', async (t) => {
    const { h, records } = await buildLogged(t, 'warn');
    const user = await h.createUser();
    const { secret } = await h.createToken(user.id);
    const ok = await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(records(), [], 'no line for a request that went well');
    await h.store.close();
    const failed = await h.api({
      method: 'GET',
      path: '/tokens/self',
      headers: { 'x-ripple-token': secret, 'x-request-id': 'failing-1' },
    });
    assert.equal(failed.statusCode, 500);
    const mine = records().filter((l) => l.reqId === 'failing-1');
    assert.ok(mine.length >= 1, `the error is logged with the request's id: ${JSON.stringify(records())}`);
    assert.ok(mine.every((l) => Number(l.level) >= 40));
    assert.equal(records().length, mine.length, 'every line carries the id');
  });

  it('replaces an unsafe or long X-Request-Id with a generated one', async (t) => {
    const { h, records } = await buildLogged(t);
    for (const given of ['has spaces', '<script>', 'a'.repeat(65), 'x"y', 'semi;colon', '']) {
      const r = await h.api({ method: 'GET', path: '/ping', headers: { 'x-request-id': given } });
      const id = String(r.headers['x-request-id']);
      assert.match(id, UUID, `for ${JSON.stringify(given)}`);
      assert.ok(records().some((l) => l.reqId === id));
      assert.equal(
        records().some((l) => l.reqId === given),
        false,
      );
    }
  });

  it('gives every request its own id, also on errors and unknown paths, and every request line has one', async (t) => {
    const { h, records } = await buildLogged(t);
    const answers = [
      await h.api({ method: 'GET', path: '/ping' }),
      await h.api({
        method: 'POST',
        path: '/tokens',
        payload: '{bad json',
        headers: { 'content-type': 'application/json' },
      }),
      await h.app.inject({ url: '/api/nope' }),
      await h.app.inject({ url: '/metrics' }),
    ];
    const ids = answers.map((r) => String(r.headers['x-request-id']));
    for (const id of ids) assert.match(id, UUID);
    assert.equal(new Set(ids).size, ids.length);
    const requestLines = records().filter((l) => 'req' in l || 'res' in l || 'responseTime' in l);
    assert.ok(requestLines.length >= 2 * answers.length);
    for (const l of requestLines) assert.ok(ids.includes(String(l.reqId)), JSON.stringify(l));
  });

  it('never logs a credential, a password or a secret query parameter', async (t) => {
    const { h, lines } = await buildLogged(t);
    const user = await h.createUser({ password: 'pw-very-secret-value' });
    const created = await h.api({
      method: 'POST',
      path: '/tokens',
      payload: { id: user.id, password: user.password },
    });
    const secret = body(created).token as string;
    await h.api({ method: 'GET', path: '/tokens', headers: { 'x-ripple-token': secret } });
    await h.api({ method: 'GET', path: '/tokens', headers: { authorization: `Bearer ${secret}` } });
    await h.api({ method: 'GET', path: `/ping?token=${secret}&x=1` });
    await h.api({ method: 'GET', path: `/ping?x=1&k=${secret}` });
    await h.api({ method: 'GET', path: '/ping', cookies: { rt: secret } });
    const text = lines.join('');
    assert.equal(text.includes(secret), false, 'the token secret was logged');
    assert.equal(text.includes('pw-very-secret-value'), false, 'the password was logged');
    assert.match(text, /token=\[REDACTED\]/);
    assert.match(text, /k=\[REDACTED\]/);
  });
});

describe('database errors in logs', () => {
  it('never carry the SQL text with its parameters (mysql2 err.sql) or the parameters', async () => {
    const { default: Fastify } = await import('fastify');
    const lines: string[] = [];
    const app = Fastify({
      logger: {
        ...(loggerOptions('info') as Record<string, unknown>),
        stream: { write: (line: string) => void lines.push(line) },
      },
    });
    const log = app.log;
    const secretish = 'deadbeef'.repeat(8);
    const err = Object.assign(new Error("Duplicate entry for key 'token_hash'"), {
      code: 'ER_DUP_ENTRY',
      sql: `INSERT INTO tokens (token_hash) VALUES ('${secretish}')`,
      parameters: [secretish],
    });
    log.error({ err: Object.assign(new Error('wrapped', { cause: err }), { sql: err.sql }) }, 'query failed');
    log.error({ err }, 'query failed');
    assert.equal(lines.length, 2);
    for (const line of lines) assert.ok(!line.includes(secretish), line);
    assert.match(lines[1]!, /ER_DUP_ENTRY/);
    await app.close();
  });
});
