// TRUST_PROXY through a real reverse proxy: tokend serves on a real port of the loopback, and a small
// HTTP proxy in front of it appends the address of the connection it received to X-Forwarded-For and
// says the request came over https, as a TLS-terminating balancer does. Clients reach the proxy from
// different loopback addresses (127.0.0.3, 127.0.0.4, …), so the proxy tells them apart by their
// sockets. For every form of TRUST_PROXY: two clients have separate login budgets, the web session
// cookie is Secure, and the OAuth issuer is https. A client that reaches tokend directly, from an
// address the setting does not trust, cannot choose its address or its scheme with forged headers.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { http, type HttpAnswer } from '../helpers/real-server.ts';
import { seedUsers, type SeedUser } from '../helpers/seed-users.ts';
import { csrfOf, form, FORM } from '../helpers/inject-browser.ts';

/** Attempts per (user, client address) per window in these tests. */
const LIMIT = 3;

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'];

/** A reverse proxy on 127.0.0.1 in front of `targetPort`: appends its client's address, says https. */
async function startReverseProxy(t: TestContext, targetPort: number): Promise<number> {
  const server: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    const prior = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = [prior, req.socket.remoteAddress].filter(Boolean).join(', ');
    headers['x-forwarded-proto'] = 'https';
    const upstream = httpRequest(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers, agent: false },
      (answer) => {
        const back: IncomingHttpHeaders = { ...answer.headers };
        for (const name of HOP_BY_HOP) delete back[name];
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502).end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

interface Setup {
  tokendPort: number;
  proxyPort: number;
  users: SeedUser[];
}

async function setUp(t: TestContext, dialect: (typeof DIALECTS)[number], trustProxy: string): Promise<Setup> {
  // tokend as it serves, on a real port of the loopback (in this process: the sockets, the proxy and the
  // addresses are what matter here, not the process).
  const h = await build(t, dialect, { TRUST_PROXY: trustProxy, LOGIN_RATE_LIMIT: String(LIMIT) });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const tokendPort = (h.app.server.address() as AddressInfo).port;
  const users = await seedUsers(h.database.config, 3);
  return { tokendPort, proxyPort: await startReverseProxy(t, tokendPort), users };
}

/** POST /api/v1/tokens from `localAddress` to `port`; the status. */
async function createToken(
  port: number,
  localAddress: string,
  user: SeedUser,
  password: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const r = await http({
    port,
    localAddress,
    method: 'POST',
    path: '/api/v1/tokens',
    headers,
    body: JSON.stringify({ id: user.id, password }),
  });
  return r.status;
}

const cookieNamed = (r: HttpAnswer, name: string): string | undefined =>
  [r.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith(`${name}=`));

const isSecure = (cookie: string | undefined) => /;\s*secure(;|$)/i.test(cookie ?? '');

/** Signs in on the web form from `localAddress` through `port`; the answer to POST /login. */
async function webSignIn(port: number, localAddress: string, user: SeedUser): Promise<HttpAnswer> {
  const page = await http({ port, localAddress, path: '/login' });
  assert.equal(page.status, 200, page.body);
  const csrfCookie = cookieNamed(page, '_csrf');
  assert.ok(csrfCookie, 'the sign-in page sets the _csrf cookie');
  const payload = form({ _csrf: csrfOf(page.body), username: user.username, password: user.password });
  return http({
    port,
    localAddress,
    method: 'POST',
    path: '/login',
    headers: {
      ...FORM,
      'content-length': String(Buffer.byteLength(payload)),
      cookie: csrfCookie.split(';')[0]!,
    },
    body: payload,
  });
}

async function issuer(port: number, localAddress: string, headers: Record<string, string> = {}) {
  const r = await http({ port, localAddress, path: '/.well-known/oauth-authorization-server', headers });
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { issuer: string }).issuer;
}

/** Spends `client`'s budget for `user` with wrong passwords; the statuses (the last must be 429). */
async function exhaust(
  port: number,
  client: string,
  user: SeedUser,
  headers: (i: number) => Record<string, string> = () => ({}),
): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i <= LIMIT; i++) codes.push(await createToken(port, client, user, 'wrong', headers(i)));
  return codes;
}

const SPENT = [...Array<number>(LIMIT).fill(403), 429];

const FORMS = [
  { name: 'a hop count', value: '1' },
  { name: 'loopback', value: 'loopback' },
  { name: "the proxy's address", value: '127.0.0.1' },
  { name: 'a CIDR list', value: '127.0.0.0/31, ::1/128' },
];

for (const dialect of DIALECTS) {
  describe(`TRUST_PROXY behind a real reverse proxy [${dialect}]`, () => {
    for (const { name, value } of FORMS) {
      it(`${name} (TRUST_PROXY=${value}): clients apart, Secure cookie, https issuer`, async (t) => {
        const { proxyPort, users } = await setUp(t, dialect, value);
        const [victim, signer] = users as [SeedUser, SeedUser];

        // Client A spends its budget for the victim's account; client B, behind the same proxy, still
        // gets its own: a wrong password is 403 (not 429), the right one a token.
        assert.deepEqual(await exhaust(proxyPort, '127.0.0.3', victim), SPENT);
        assert.equal(await createToken(proxyPort, '127.0.0.4', victim, 'wrong'), 403);
        assert.equal(await createToken(proxyPort, '127.0.0.4', victim, victim.password), 200);
        assert.equal(await createToken(proxyPort, '127.0.0.3', victim, victim.password), 429);

        // The balancer terminated TLS: the session cookie of the web sign-in is Secure.
        const signedIn = await webSignIn(proxyPort, '127.0.0.5', signer);
        assert.equal(signedIn.status, 303, signedIn.body);
        const rt = cookieNamed(signedIn, 'rt');
        assert.ok(rt, 'signed in');
        assert.ok(isSecure(rt), rt);

        // Without PUBLIC_URL the issuer is the origin the client reached: https, the proxy's host.
        assert.equal(await issuer(proxyPort, '127.0.0.5'), `https://127.0.0.1:${proxyPort}`);
      });
    }

    it('a hop count: a client forging X-Forwarded-For through the proxy is counted by its real address', async (t) => {
      const { proxyPort, users } = await setUp(t, dialect, '1');
      const [victim] = users as [SeedUser];
      // Every attempt claims another address; the proxy appends the true one, and only that counts.
      const forged = (i: number) => ({ 'x-forwarded-for': `198.51.100.${i + 1}` });
      assert.deepEqual(await exhaust(proxyPort, '127.0.0.3', victim, forged), SPENT);
      // Nor does claiming another client's address spend that client's budget.
      const framed = () => ({ 'x-forwarded-for': '127.0.0.4' });
      const [, other] = users as [SeedUser, SeedUser];
      assert.deepEqual(await exhaust(proxyPort, '127.0.0.3', other, framed), SPENT);
      assert.equal(await createToken(proxyPort, '127.0.0.4', other, other.password), 200);
    });

    it("a list: a client reaching tokend directly from an untrusted address can't forge its address or scheme", async (t) => {
      const { tokendPort, users } = await setUp(t, dialect, '127.0.0.1');
      const [victim, other] = users as [SeedUser, SeedUser];
      const forged = (i: number) => ({
        'x-forwarded-for': `198.51.100.${i + 1}`,
        'x-forwarded-proto': 'https',
      });
      // 127.0.0.2 is not the trusted proxy: its headers are ignored, its socket address counts.
      assert.deepEqual(await exhaust(tokendPort, '127.0.0.2', victim, forged), SPENT);
      // It cannot spend another address's budget by naming it either.
      const framed = () => ({ 'x-forwarded-for': '127.0.0.6' });
      assert.deepEqual(await exhaust(tokendPort, '127.0.0.2', other, framed), SPENT);
      assert.equal(await createToken(tokendPort, '127.0.0.6', other, other.password), 200);
      // Nor its scheme: the issuer stays http.
      assert.equal(
        await issuer(tokendPort, '127.0.0.2', { 'x-forwarded-proto': 'https' }),
        `http://127.0.0.1:${tokendPort}`,
      );
    });
  });
}
