// Property-based fuzzing of the v1 API through app.inject (SQLite): create-token bodies, query strings,
// credential headers and cookies. Whatever arrives, the answer is an envelope (JSON, or JSONP when a valid
// callback was asked for) whose code is 200 or a 4xx and equals the HTTP status (unless pls200): never a
// 5xx, never a body that is not an envelope. 20,000 generated requests in all.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { build, type Harness } from '../helpers/app.ts';
import { within } from '../helpers/waiting.ts';
import { fuzzRuns, fuzzSeed } from '../helpers/fuzz.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';

const RUNS = {
  bodies: fuzzRuns(8000),
  queries: fuzzRuns(6000),
  credentials: fuzzRuns(6000),
  raw: fuzzRuns(1000),
};
const SEED = fuzzSeed();

/** Checks one answer; `rawQuery` is the query string as sent (pls200 may turn any code into HTTP 200). */
function assertEnvelope(r: LightMyRequestResponse, rawQuery: string): void {
  const context = `${r.statusCode} ${r.body.slice(0, 300)}`;
  assert.ok(r.statusCode < 500, `5xx: ${context}`);
  let text = r.body;
  const jsonp = /^\/\*\*\/([a-zA-Z_$][a-zA-Z0-9_$]*)\(([\s\S]*)\);$/.exec(text);
  if (jsonp) {
    assert.match(String(r.headers['content-type']), /^application\/javascript/, context);
    assert.ok(rawQuery.includes('callback'), `JSONP without a callback: ${context}`);
    text = jsonp[2]!;
  } else {
    assert.match(String(r.headers['content-type']), /^application\/json/, context);
  }
  const envelope = JSON.parse(text) as { code?: unknown; message?: unknown };
  assert.ok(Number.isInteger(envelope.code), `no integer code: ${context}`);
  assert.equal(typeof envelope.message, 'string', `no message: ${context}`);
  const code = envelope.code as number;
  assert.ok(code === 200 || (code >= 400 && code < 500), `code ${code}: ${context}`);
  if (r.statusCode !== code)
    assert.ok(
      r.statusCode === 200 && rawQuery.includes('pls200'),
      `status ${r.statusCode} ≠ code: ${context}`,
    );
}

// ---- arbitraries ----

/** Characters a client can put in an HTTP header value: tab, visible ASCII, and obs-text bytes. */
const headerChar = fc.oneof(
  { weight: 1, arbitrary: fc.constant('\t') },
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
);
const headerValue = fc.string({ unit: headerChar, maxLength: 120 });

/** Strings of any kind: ASCII, any code point, lone surrogates, long runs. */
const anyString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ minLength: 900, maxLength: 3000 }),
);

const weirdNumber = fc.oneof(
  fc.integer(),
  fc.integer({ min: -3, max: 12 }),
  fc.double(),
  fc.maxSafeInteger(),
  fc.constantFrom(0, -0, 1, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e308, -1e308, 0.5, 1e-300),
);

/** Number literals JSON.stringify never writes but a client may send. */
const numberLiteral = fc.constantFrom(
  '1e400',
  '-1e400',
  '1.0',
  '1e2',
  '-0',
  '0.0000001',
  '9007199254740993',
  '18446744073709551616',
  '9'.repeat(400),
  '1E+2',
);

const anyJson = fc.jsonValue({ maxDepth: 3 });
const anyValue = fc.oneof(anyJson, weirdNumber, anyString, fc.constant(null), fc.boolean());

function bodies(users: { ids: number[]; names: string[]; passwords: string[] }) {
  const field = <T>(specific: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 3, arbitrary: specific }, { weight: 1, arbitrary: anyValue });
  const record = fc.record(
    {
      username: field(fc.oneof(fc.constantFrom(...users.names), anyString)),
      id: field(fc.oneof(fc.constantFrom(...users.ids, 0), weirdNumber)),
      password: field(fc.oneof(fc.constantFrom(...users.passwords, ''), anyString)),
      privileges: field(weirdNumber),
      description: field(anyString),
    },
    { requiredKeys: [] },
  );
  const literalBody = fc
    .tuple(fc.constantFrom('id', 'privileges'), numberLiteral, fc.constantFrom(...users.passwords))
    .map(
      ([key, literal, password]) =>
        `{"${key}": ${literal}, "password": ${JSON.stringify(password)}, "id": 1}`,
    );
  const pollution = fc.constantFrom(
    '{"__proto__": {"id": 1}, "password": "x"}',
    '{"constructor": {"prototype": {"id": 1}}, "password": "x"}',
    '{"id": 1, "password": "x", "description": {"__proto__": null}}',
  );
  return fc.oneof(
    { weight: 5, arbitrary: record.map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: literalBody },
    { weight: 1, arbitrary: pollution },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 1, arbitrary: record.map((v) => JSON.stringify(v).slice(0, -1)) }, // truncated JSON
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'APPLICATION/JSON',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/** Percent-encodes any string byte by byte (lone surrogates become U+FFFD, as a browser would send). */
const encode = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0')).join('');

/** A query value: numbers in many spellings, identifiers, junk, raw characters that need no encoding. */
const queryValue = fc.oneof(
  weirdNumber.map((n) => encode(String(n))),
  fc.constantFrom(
    '',
    'self',
    '0',
    '+0',
    '-1',
    '1e2',
    '0x10',
    ' 1',
    '1 ',
    '00',
    'NaN',
    'Infinity',
    '1.5',
    '-0',
  ),
  fc.stringMatching(/^[a-zA-Z_$][a-zA-Z0-9_$]{0,110}$/), // callback-like, around the 100-character limit
  anyString.map(encode),
  fc.string({
    unit: fc.constantFrom('%', 'z', '2', '+', '=', '&', '[', ']', '.', ';', '1', '$'),
    maxLength: 12,
  }),
);
const queryKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('p', 'l', 'id', 'callback', 'pls200', 'token', 'k') },
  { weight: 1, arbitrary: fc.constantFrom('p[]', 'id[0]', '__proto__', 'constructor', 'callback[]') },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }).map(encode) },
);
const queryString = fc
  .array(fc.tuple(queryKey, fc.option(queryValue, { nil: undefined })), { maxLength: 6 })
  .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&'));

const ENDPOINTS = [
  ['GET', '/tokens'],
  ['GET', '/tokens/self'],
  ['GET', '/ping'],
  ['POST', '/tokens/fix_privileges'],
  ['POST', '/tokens/self/delete'],
  ['DELETE', '/tokens/self'],
  ['GET', '/no/such/endpoint'],
  ['POST', '/tokens'],
] as const;
const endpoint = fc.constantFrom(...ENDPOINTS);

interface World {
  h: Harness;
  users: { ids: number[]; names: string[]; passwords: string[] };
  /** A token with ManageUser + APIMeta, so fix_privileges gets as far as reading `id`. */
  adminToken: string;
}

async function world(t: Parameters<typeof build>[0]): Promise<World> {
  const h = await build(t, 'sqlite', { LOGIN_RATE_LIMIT: '1000000000', LOGIN_IP_RATE_LIMIT: '1000000000' });
  const active = await h.createUser();
  const banned = await h.createUser({ privileges: 0 });
  const legacy = await h.createUser({ passwordVersion: 1 });
  const admin = await h.createUser({ privileges: 3 | 8 | 16 | 32 | 512 }); // may hold ManageUser and APIMeta
  const { secret } = await h.createToken(admin.id, {
    privileges: TokenPrivilege.ManageUser | TokenPrivilege.APIMeta,
  });
  const all = [active, banned, legacy, admin];
  return {
    h,
    users: {
      ids: all.map((u) => u.id),
      names: all.map((u) => u.username),
      passwords: all.map((u) => u.password),
    },
    adminToken: secret,
  };
}

describe('fuzzing the v1 API', () => {
  it(`create-token bodies (${RUNS.bodies} requests)`, async (t) => {
    const { h, users } = await world(t);
    await fc.assert(
      fc.asyncProperty(
        bodies(users),
        contentType,
        fc.constantFrom('/tokens', '/tokens/new', '/token/new'),
        fc.constantFrom('', '?pls200', '?callback=cb', '?pls200&callback=cb', '?callback=1bad'),
        async (payload, type, path, query) => {
          const r = await h.api({
            method: 'POST',
            path: path + query,
            headers: { 'content-type': type },
            payload,
          });
          assertEnvelope(r, query);
        },
      ),
      { numRuns: RUNS.bodies, seed: SEED },
    );
  });

  it(`query strings (${RUNS.queries} requests)`, async (t) => {
    const { h, adminToken } = await world(t);
    await fc.assert(
      fc.asyncProperty(endpoint, queryString, fc.boolean(), async ([method, path], query, identified) => {
        const r = await h.api({
          method,
          path: `${path}?${query}`,
          headers:
            identified && path !== '/tokens/self/delete' && method !== 'DELETE'
              ? { 'x-ripple-token': adminToken }
              : {},
        });
        assertEnvelope(r, query);
      }),
      { numRuns: RUNS.queries, seed: SEED },
    );
    await h.app.tokend.jobs.idle();
  });

  it(`credential headers and cookies (${RUNS.credentials} requests)`, async (t) => {
    const { h, adminToken } = await world(t);
    const credential = fc.oneof(headerValue, fc.constant(adminToken), fc.constant(adminToken.toUpperCase()));
    const transports = fc.record(
      {
        'x-ripple-token': credential,
        authorization: fc.oneof(
          credential.map((c) => `Bearer ${c}`),
          credential.map((c) => `bearer  ${c}`),
          headerValue,
          credential.map((c) => `Basic ${c}`),
        ),
        cookie: fc.oneof(
          credential.map((c) => `rt=${c}`),
          headerValue,
          fc.tuple(headerValue, credential).map(([a, c]) => `${a}; rt=${c}; rt=x`),
          fc.constantFrom('rt=%E0%A4%A', 'rt="unterminated', 'rt=%%', '=;=;rt', 'rt'),
        ),
      },
      { requiredKeys: [] },
    );
    const queryCredential = fc.option(
      fc.tuple(fc.constantFrom('token', 'k'), queryValue).map(([k, v]) => `${k}=${v}`),
      { nil: '' },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS.filter(([m, p]) => !(m === 'POST' && p === '/tokens'))),
        transports,
        queryCredential,
        fc.constantFrom('', 'pls200', 'callback=cb'),
        async ([method, path], headers, credentialQuery, extra) => {
          // Never delete the admin token itself: the other runs need it.
          const deletes = path === '/tokens/self/delete' || method === 'DELETE';
          const values = Object.values(headers).join(' ') + credentialQuery;
          if (deletes && values.includes(adminToken)) return;
          const query = [credentialQuery, extra].filter(Boolean).join('&');
          const r = await h.api({ method, path: `${path}?${query}`, headers });
          assertEnvelope(r, query);
        },
      ),
      { numRuns: RUNS.credentials, seed: SEED },
    );
    await h.app.tokend.jobs.idle();
  });

  it('URLs the router cannot read (found by the raw fuzz) get a 400 envelope', async (t) => {
    const { h } = await world(t);
    for (const url of ['/api/v1/%', '/api/v1/tokens/%zz', '/%E0%A4%A', '/health/%', '/api/v1/%?pls200']) {
      const r = await h.app.inject({ url });
      assert.equal(r.statusCode, 400, `${url}: ${r.body}`);
      assertEnvelope(r, '');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
    }
  });

  it(`raw HTTP on a socket, parser errors included (${RUNS.raw} connections)`, async (t) => {
    const { h } = await world(t);
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (h.app.server.address() as { port: number }).port;
    const anyByte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
    const tchar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-_!#$%&*+.^`|~');
    const header = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(fc.string({ unit: tchar, minLength: 1, maxLength: 20 }), headerValue),
      },
      {
        weight: 2,
        arbitrary: fc.tuple(
          fc.constantFrom('x-ripple-token', 'authorization', 'cookie', 'content-type'),
          headerValue,
        ),
      },
      // Bytes HTTP forbids in names and values (CR, LF, NUL, other controls): the parser must refuse them.
      {
        weight: 1,
        arbitrary: fc.tuple(
          fc.string({ unit: anyByte, minLength: 1, maxLength: 10 }),
          fc.string({ unit: anyByte, maxLength: 40 }),
        ),
      },
    );
    const target = fc.oneof(
      fc.constantFrom(
        ...ENDPOINTS.map(([, p]) => `/api/v1${p}`),
        '/health/ready',
        '/',
        '*',
        '/api/v1/tokens?pls200&callback=cb',
      ),
      fc.string({ unit: anyByte, maxLength: 40 }).map((p) => `/api/v1/${p}`),
      fc.tuple(fc.constantFrom('/api/v1/tokens', '/api/v1/ping'), queryString).map(([p, q]) => `${p}?${q}`),
    );
    const request = fc.record({
      method: fc.oneof(
        fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'OPTIONS', 'PATCH'),
        fc.string({ unit: tchar, minLength: 1, maxLength: 8 }),
      ),
      target,
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x'),
      headers: fc.array(header, { maxLength: 6 }),
      body: fc.oneof(fc.constant(''), bodies({ ids: [1], names: ['x'], passwords: ['y'] })),
      // Some clients half-close (FIN) once the request is sent, and still wait for the answer.
      halfClose: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ method, target, version, headers, body, halfClose }) => {
        const payload = Buffer.from(body, 'utf8');
        const head =
          `${method} ${target} ${version}\r\nHost: fuzz\r\nConnection: close\r\n` +
          headers.map(([n, v]) => `${n}: ${v}\r\n`).join('') +
          (payload.length > 0
            ? `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n`
            : '') +
          '\r\n';
        const raw = await within(
          5000,
          'the raw request',
          sendRaw(port, Buffer.concat([Buffer.from(head, 'latin1'), payload]), halfClose),
        );
        const response = parseResponse(raw);
        assert.ok(
          response,
          `no HTTP response to ${JSON.stringify(head.slice(0, 200))}: ${JSON.stringify(raw.slice(0, 200))}`,
        );
        assert.ok(response.status < 500, `${response.status} for ${JSON.stringify(head.slice(0, 200))}`);
        if (method === 'HEAD' || response.status === 204) return;
        assertEnvelope(
          {
            statusCode: response.status,
            body: response.body,
            headers: response.headers,
          } as unknown as LightMyRequestResponse,
          target,
        );
      }),
      { numRuns: RUNS.raw, seed: SEED },
    );
  });
});

/**
 * Writes one raw request (then a FIN when `halfClose`) and resolves with everything the server sent
 * before it closed the connection (Connection: close), or before `quietMs` passed without it closing.
 */
function sendRaw(port: number, bytes: Buffer, halfClose: boolean, quietMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, quietMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (err) => (chunks.length > 0 ? done() : (clearTimeout(timer), reject(err))));
    socket.on('close', done);
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

/** The first response in `raw`: status, lower-cased headers, and its body (de-chunked). */
function parseResponse(
  raw: string,
): { status: number; headers: Record<string, string>; body: string } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = Buffer.from(raw.slice(end + 4), 'latin1');
  let body: Buffer;
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (!(size > 0)) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(headers['content-length'] ?? rest.length);
    body = rest.subarray(0, length);
  }
  return { status: Number(m[1]), headers, body: body.toString('utf8') };
}
