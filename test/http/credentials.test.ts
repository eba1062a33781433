// The five credential transports, their priority, and what an unknown credential means.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness, type Harness } from '../helpers/app.ts';

type Transport = 'x-ripple-token' | 'bearer' | 'token' | 'k' | 'cookie';
/** In priority order: the earlier wins. */
const TRANSPORTS: Transport[] = ['x-ripple-token', 'bearer', 'token', 'k', 'cookie'];

/** Request options that carry each (transport, secret) pair. */
function carrying(pairs: Array<[Transport, string]>, extraQuery: Record<string, string> = {}) {
  const headers: Record<string, string> = {};
  const query: Record<string, string> = { ...extraQuery };
  const cookies: Record<string, string> = {};
  for (const [transport, secret] of pairs) {
    if (transport === 'x-ripple-token') headers['x-ripple-token'] = secret;
    else if (transport === 'bearer') headers.authorization = `Bearer ${secret}`;
    else if (transport === 'cookie') cookies.rt = secret;
    else query[transport] = secret;
  }
  return { headers, query, cookies } satisfies Partial<InjectOptions>;
}

async function whoUses(h: Harness, pairs: Array<[Transport, string]>, extraQuery?: Record<string, string>) {
  return h.api({ method: 'GET', path: '/tokens/self', ...carrying(pairs, extraQuery) });
}

async function twoTokens(h: Harness) {
  const user = await h.createUser();
  const first = await h.createToken(user.id, { description: 'first' });
  const second = await h.createToken(user.id, { description: 'second' });
  return { user, first, second };
}

for (const dialect of DIALECTS) {
  describe(`credentials [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('each of the five transports identifies the request', async () => {
      const h = harness();
      const { first } = await twoTokens(h);
      for (const transport of TRANSPORTS) {
        const r = await whoUses(h, [[transport, first.secret]]);
        assert.equal(r.statusCode, 200, `${transport}: ${r.body}`);
        assert.equal(body(r).id, first.id, transport);
        assert.equal(body(r).description, 'first', transport);
      }
    });

    it('when two transports are present, the earlier one wins (every pair, both ways round)', async () => {
      const h = harness();
      const { first, second } = await twoTokens(h);
      for (let i = 0; i < TRANSPORTS.length; i++) {
        for (let j = i + 1; j < TRANSPORTS.length; j++) {
          const early = TRANSPORTS[i]!;
          const late = TRANSPORTS[j]!;
          const a = await whoUses(h, [
            [early, first.secret],
            [late, second.secret],
          ]);
          assert.equal(body(a).description, 'first', `${early} before ${late}: ${a.body}`);
          const b = await whoUses(h, [
            [early, second.secret],
            [late, first.secret],
          ]);
          assert.equal(body(b).description, 'second', `${early} before ${late}: ${b.body}`);
        }
      }
    });

    it('all five at once: X-Ripple-Token is used', async () => {
      const h = harness();
      const { first, second } = await twoTokens(h);
      const r = await whoUses(h, [
        ['cookie', second.secret],
        ['k', second.secret],
        ['token', second.secret],
        ['bearer', second.secret],
        ['x-ripple-token', first.secret],
      ]);
      assert.equal(body(r).id, first.id);
    });

    it('the Bearer scheme name is case-insensitive; other schemes are not credentials', async () => {
      const h = harness();
      const { first } = await twoTokens(h);
      const lower = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `bearer ${first.secret}` },
      });
      assert.equal(body(lower).id, first.id);
      const basic = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Basic ${Buffer.from(`x:${first.secret}`).toString('base64')}` },
      });
      assert.equal(basic.statusCode, 404);
    });

    it('a value that matches nothing leaves the request unidentified, not failed', async () => {
      const h = harness();
      await twoTokens(h);
      for (const transport of TRANSPORTS) {
        for (const value of ['0123456789abcdef0123456789abcdef', 'not-a-token', 'x'.repeat(500)]) {
          const self = await whoUses(h, [[transport, value]]);
          assert.equal(self.statusCode, 404, `${transport}: ${self.body}`);
          assert.equal(body(self).code, 404);
          const ping = await h.api({ method: 'GET', path: '/ping', ...carrying([[transport, value]]) });
          assert.equal(ping.statusCode, 200, ping.body);
          assert.equal(body(ping).user_id, 0);
          const list = await h.api({ method: 'GET', path: '/tokens', ...carrying([[transport, value]]) });
          assert.equal(list.statusCode, 401, list.body);
        }
      }
    });

    it('the first present transport decides: an unknown header is not overridden by a valid later one', async () => {
      const h = harness();
      const { first } = await twoTokens(h);
      const r = await whoUses(h, [
        ['x-ripple-token', 'ffffffffffffffffffffffffffffffff'],
        ['token', first.secret],
      ]);
      assert.equal(r.statusCode, 404, r.body);
    });

    it('a deleted token no longer identifies anyone, by any transport', async () => {
      const h = harness();
      const { first, second } = await twoTokens(h);
      const del = await h.api({
        method: 'DELETE',
        path: '/tokens/self',
        headers: { 'x-ripple-token': first.secret },
      });
      assert.equal(del.statusCode, 200);
      for (const transport of TRANSPORTS) {
        assert.equal((await whoUses(h, [[transport, first.secret]])).statusCode, 404, transport);
        assert.equal(body(await whoUses(h, [[transport, second.secret]])).id, second.id, transport);
      }
    });

    it('the rt cookie is ignored on a JSONP request; other transports still work there', async () => {
      const h = harness();
      const { first } = await twoTokens(h);
      const viaCookie = await whoUses(h, [['cookie', first.secret]], { callback: 'cb' });
      assert.match(viaCookie.headers['content-type'] ?? '', /application\/javascript/);
      assert.match(viaCookie.body, /"code":404/);
      assert.doesNotMatch(viaCookie.body, /"description"/);
      const ping = await h.api({
        method: 'GET',
        path: '/ping',
        ...carrying([['cookie', first.secret]], { callback: 'cb' }),
      });
      assert.match(ping.body, /"user_id":0/);
      const viaHeader = await whoUses(h, [['x-ripple-token', first.secret]], { callback: 'cb' });
      assert.match(viaHeader.body, /"code":200/);
      assert.match(viaHeader.body, /"description":"first"/);
      const viaQuery = await whoUses(h, [['k', first.secret]], { callback: 'cb' });
      assert.match(viaQuery.body, /"description":"first"/);
      // without callback the same cookie works
      assert.equal(body(await whoUses(h, [['cookie', first.secret]])).id, first.id);
    });
  });
}
