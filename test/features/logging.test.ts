// Structured JSON logs: one access line per request at info, every request's lines carry its id,
// echoed as X-Request-Id; secrets never appear; no line is lost when the process is stopped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { build, body } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { http, startTokend } from '../helpers/real-server.ts';
import { eventually, within } from '../helpers/waiting.ts';
import { loggerOptions } from '../../src/http/logging.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function buildLogged(t: TestContext, level = 'info', env: Record<string, string> = {}) {
  const lines: string[] = [];
  const logger = {
    ...loggerOptions(level),
    stream: { write: (line: string) => void lines.push(line) },
  };
  const h = await build(t, 'sqlite', { LOG_LEVEL: level, ...env }, { logger });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { h, lines, records };
}

const accessLines = (records: Array<Record<string, unknown>>) =>
  records.filter((l) => l.msg === 'request completed');

describe('the access line', () => {
  it('is one line per request at info: id, method, URL, status, time and client address', async (t) => {
    const { h, records } = await buildLogged(t);
    const user = await h.createUser();
    const { secret } = await h.createToken(user.id);
    const read = await h.api({
      method: 'GET',
      path: '/tokens/self',
      headers: { 'x-ripple-token': secret, 'x-request-id': 'read-1' },
    });
    assert.equal(read.statusCode, 200);
    const missing = await h.app.inject({ url: '/api/v1/no/such?x=1', headers: { 'x-request-id': 'miss-1' } });
    assert.equal(missing.statusCode, 404);

    assert.deepEqual(
      records().map((l) => l.reqId),
      ['read-1', 'miss-1'],
      'one line for each request, nothing else',
    );
    const [readLine, missingLine] = records();
    assert.deepEqual(Object.keys(readLine!).sort(), [
      'hostname',
      'level',
      'method',
      'msg',
      'pid',
      'remoteAddress',
      'reqId',
      'responseTime',
      'statusCode',
      'time',
      'url',
    ]);
    assert.equal(readLine!.level, 30);
    assert.equal(readLine!.msg, 'request completed');
    assert.equal(readLine!.method, 'GET');
    assert.equal(readLine!.url, '/api/v1/tokens/self');
    assert.equal(readLine!.statusCode, 200);
    assert.equal(readLine!.remoteAddress, '127.0.0.1');
    assert.ok(typeof readLine!.responseTime === 'number' && readLine!.responseTime >= 0);
    assert.deepEqual(
      [missingLine!.method, missingLine!.url, missingLine!.statusCode],
      ['GET', '/api/v1/no/such?x=1', 404],
    );
  });

  it('redacts a credential in the URL: the line shows the parameter, never its value', async (t) => {
    const { h, lines, records } = await buildLogged(t);
    const user = await h.createUser();
    const { secret } = await h.createToken(user.id);
    const r = await h.api({ method: 'GET', path: `/tokens/self?x=1&token=${secret}&K=${secret}` });
    assert.equal(r.statusCode, 200);
    assert.deepEqual(
      accessLines(records()).map((l) => l.url),
      ['/api/v1/tokens/self?x=1&token=[REDACTED]&K=[REDACTED]'],
    );
    assert.equal(lines.join('').includes(secret), false);
  });

  it('is not written at warn, nor with ACCESS_LOG=off, which keeps the other info lines', async (t) => {
    const warn = await buildLogged(t, 'warn');
    await warn.h.api({ method: 'GET', path: '/ping' });
    assert.deepEqual(warn.records(), []);

    const off = await buildLogged(t, 'info', { ACCESS_LOG: 'off' });
    await off.h.api({ method: 'GET', path: '/ping' });
    assert.deepEqual(accessLines(off.records()), []);
    off.h.app.log.info('an info line of its own');
    assert.deepEqual(
      off.records().map((l) => l.msg),
      ['an info line of its own'],
    );
  });

  it('is written to stdout within a second when traffic is low, and none is lost on SIGTERM', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const server = await startTokend({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_MS: '0',
    });
    t.after(() => server.kill());
    const answered = (id: string) =>
      server.lines.some((l) => l.includes('"msg":"request completed"') && l.includes(`"reqId":"${id}"`));

    // One request on a quiet server: its line does not wait for more lines to come.
    await http({ port: server.port, path: '/api/v1/ping', headers: { 'x-request-id': 'quiet-1' } });
    assert.ok(await eventually(60, 50, async () => answered('quiet-1')), server.output());

    // A few requests at once (fewer lines than a write waits for), then SIGTERM: the lines still waiting
    // to be written are written before the process exits.
    const burst = Array.from({ length: 5 }, (_, i) => `burst-${i}`);
    await Promise.all(
      burst.map((id) => http({ port: server.port, path: '/api/v1/ping', headers: { 'x-request-id': id } })),
    );
    server.child.kill('SIGTERM');
    assert.deepEqual(await within(10_000, 'exit after SIGTERM', server.exited), { code: 0, signal: null });
    assert.deepEqual(
      burst.filter((id) => !answered(id)),
      [],
      'requests answered but missing from the log',
    );
  });
});

describe('request ids and structured logs', () => {
  it('keeps a short, safe X-Request-Id, echoes it, and tags every line of the request with it', async (t) => {
    const { h, records } = await buildLogged(t);
    const r = await h.api({ method: 'GET', path: '/ping', headers: { 'x-request-id': 'edge-42.a:b_c' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['x-request-id'], 'edge-42.a:b_c');
    const mine = records().filter((l) => l.reqId === 'edge-42.a:b_c');
    assert.deepEqual(
      mine.map((l) => l.msg),
      ['request completed'],
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
    assert.deepEqual(
      requestLines.map((l) => l.reqId),
      ids,
      'one access line for each request',
    );
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
