// LOGIN_IP_RATE_LIMIT: one client address may try so many logins across all users per window (429 with
// Retry-After beyond it, at step 4 of the check order), keyed by the canonical address: IPv6 by its /64,
// IPv4-mapped IPv6 as IPv4, and a forwarded value that is not an address as the socket's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import type { FastifyRequest } from 'fastify';
import { canonicalAddress, clientAddress } from '../../src/http/client-address.ts';

describe('clientAddress', () => {
  const requestOn = (socket: { remoteAddress?: string }, ip: string | undefined) =>
    ({ socket, ip }) as unknown as FastifyRequest;

  it("gives the connection's canonical address for every request on it, and a forwarded one's own", () => {
    const socket = { remoteAddress: '::ffff:203.0.113.7' };
    for (let i = 0; i < 3; i++)
      assert.equal(clientAddress(requestOn(socket, socket.remoteAddress)), '203.0.113.7');
    // Through a trusted proxy Fastify's address is the forwarded one, request by request.
    assert.equal(clientAddress(requestOn(socket, '2001:db8::1')), '2001:db8:0:0::/64');
    assert.equal(clientAddress(requestOn(socket, '198.51.100.2')), '198.51.100.2');
    // A forwarded value that is no address: the socket's.
    assert.equal(clientAddress(requestOn(socket, 'foo')), '203.0.113.7');
    assert.equal(clientAddress(requestOn({ remoteAddress: 'nonsense' }, 'nonsense')), 'unknown');
  });
});

describe('canonicalAddress', () => {
  it('puts every spelling of one client in one form', () => {
    const cases: Array<[string, string | undefined]> = [
      ['203.0.113.7', '203.0.113.7'],
      ['::ffff:203.0.113.7', '203.0.113.7'],
      ['::FFFF:cb00:7107', '203.0.113.7'],
      ['0:0:0:0:0:ffff:cb00:7107', '203.0.113.7'],
      ['2001:db8::1', '2001:db8:0:0::/64'],
      ['2001:0DB8:0000:0000:ffff:ffff:ffff:ffff', '2001:db8:0:0::/64'],
      ['2001:db8:0:1::1', '2001:db8:0:1::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['203.0.113.007', undefined],
      ['foo', undefined],
      ['', undefined],
      ['1.2.3.4, 5.6.7.8', undefined],
    ];
    for (const [raw, want] of cases) assert.equal(canonicalAddress(raw), want, raw);
  });

  it('drops the port a balancer adds to an X-Forwarded-For entry: v4:port and [v6]:port only', () => {
    const cases: Array<[string, string | undefined]> = [
      ['203.0.113.7:5678', '203.0.113.7'],
      ['203.0.113.7:0', '203.0.113.7'],
      ['203.0.113.7:65535', '203.0.113.7'],
      ['[2001:db8:0:1::7]:443', '2001:db8:0:1::/64'],
      ['[2001:db8:0:1::7]', '2001:db8:0:1::/64'],
      ['[::ffff:203.0.113.7]:8080', '203.0.113.7'],
      ['[fe80::1%eth0]:443', 'fe80:0:0:0::/64'],
      // A bare IPv6 address keeps its last group: were it read as a port, these would be no address.
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4::/64'],
      ['2001:db8:1:2::443', '2001:db8:1:2::/64'],
      // Not an address with a port.
      ['203.0.113.7:65536', undefined],
      ['203.0.113.7:', undefined],
      ['203.0.113.7:80:80', undefined],
      ['203.0.113.007:80', undefined],
      ['[203.0.113.7]:80', undefined],
      ['[2001:db8::1]:', undefined],
      ['[2001:db8::1]:99999', undefined],
      ['[2001:db8::1', undefined],
      ['foo:80', undefined],
      ['1:80', undefined],
    ];
    for (const [raw, want] of cases) assert.equal(canonicalAddress(raw), want, raw);
  });
});

const login = (h: Harness, user: TestUser, from?: string, password = user.password) =>
  h.api({
    method: 'POST',
    path: '/tokens',
    headers: from === undefined ? {} : { 'x-forwarded-for': from },
    payload: { id: user.id, password },
  });

for (const dialect of DIALECTS) {
  describe(`login limit per client address [${dialect}]`, () => {
    it('refuses the address across users beyond LOGIN_IP_RATE_LIMIT; other addresses go on', async (t) => {
      const h = await build(t, dialect, { LOGIN_IP_RATE_LIMIT: '3', TRUST_PROXY: 'loopback' });
      const users = await Promise.all(Array.from({ length: 5 }, () => h.createUser()));
      assert.equal((await login(h, users[0]!, '198.51.100.1', 'wrong')).statusCode, 403);
      assert.equal((await login(h, users[1]!, '198.51.100.1')).statusCode, 200);
      assert.equal((await login(h, users[2]!, '198.51.100.1')).statusCode, 200);
      const refused = await login(h, users[3]!, '198.51.100.1');
      assert.equal(refused.statusCode, 429);
      assert.equal(body(refused).code, 429);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal((await login(h, users[3]!, '198.51.100.2')).statusCode, 200, 'another address');
      // Step 4 comes after step 3: an unknown user is still a 404, and costs nothing.
      const nobody = await h.api({
        method: 'POST',
        path: '/tokens',
        headers: { 'x-forwarded-for': '198.51.100.1' },
        payload: { username: 'nobody_here', password: 'x' },
      });
      assert.equal(nobody.statusCode, 404);
    });

    it('counts an IPv6 /64 as one client, and spellings of one address as one', async (t) => {
      const h = await build(t, dialect, { LOGIN_IP_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' });
      const users = await Promise.all(Array.from({ length: 4 }, () => h.createUser()));
      assert.equal((await login(h, users[0]!, '2001:db8::1')).statusCode, 200);
      assert.equal((await login(h, users[1]!, '2001:db8::ffff:2')).statusCode, 200);
      assert.equal((await login(h, users[2]!, '2001:db8:0:0:1::3')).statusCode, 429, 'same /64');
      assert.equal((await login(h, users[2]!, '2001:db8:0:1::1')).statusCode, 200, 'another /64');

      assert.equal((await login(h, users[0]!, '203.0.113.7')).statusCode, 200);
      assert.equal((await login(h, users[1]!, '::ffff:cb00:7107')).statusCode, 200);
      assert.equal((await login(h, users[3]!, '::ffff:203.0.113.7')).statusCode, 429, 'one IPv4 client');
    });

    it('reads an X-Forwarded-For entry with a port as its address: two such clients, two budgets', async (t) => {
      const h = await build(t, dialect, { LOGIN_IP_RATE_LIMIT: '2', TRUST_PROXY: '127.0.0.1' });
      const users = await Promise.all(Array.from({ length: 4 }, () => h.createUser()));
      assert.equal((await login(h, users[0]!, '198.51.100.1:5678')).statusCode, 200);
      assert.equal((await login(h, users[1]!, '198.51.100.1:5679')).statusCode, 200);
      assert.equal((await login(h, users[2]!, '198.51.100.1:5680')).statusCode, 429, 'one client, any port');
      assert.equal((await login(h, users[2]!, '[2001:db8::1]:443')).statusCode, 200, 'another client');
      assert.equal((await login(h, users[3]!, '198.51.100.2:5678')).statusCode, 200, 'another client');
      assert.equal((await login(h, users[3]!, '[2001:db8::2]:80')).statusCode, 200, 'the same /64');
      assert.equal((await login(h, users[0]!, '2001:db8::3')).statusCode, 429, 'the /64, without a port');
      assert.equal((await login(h, users[0]!)).statusCode, 200, 'the proxy itself has its own budget');
    });

    it('a forwarded value that is not an address counts as the socket address', async (t) => {
      const h = await build(t, dialect, { LOGIN_IP_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' });
      const users = await Promise.all(Array.from({ length: 3 }, () => h.createUser()));
      assert.equal((await login(h, users[0]!, 'foo')).statusCode, 200);
      assert.equal((await login(h, users[1]!, '203.0.113.007')).statusCode, 200);
      assert.equal((await login(h, users[2]!)).statusCode, 429, 'all three were the socket, 127.0.0.1');
    });

    it('the web sign-in counts against the same budget', async (t) => {
      const h = await build(t, dialect, { LOGIN_IP_RATE_LIMIT: '2' });
      const users = await Promise.all(Array.from({ length: 3 }, () => h.createUser()));
      const browser = new InjectBrowser(h.app);
      await browser.signIn(users[0]!);
      assert.equal((await login(h, users[1]!)).statusCode, 200);
      const page = await browser.get('/login');
      const r = await browser.post('/login', {
        _csrf: csrfOf(page.body),
        username: users[2]!.username,
        password: users[2]!.password,
      });
      assert.equal(r.statusCode, 429);
      assert.ok(Number(r.headers['retry-after']) >= 1);
    });
  });
}
