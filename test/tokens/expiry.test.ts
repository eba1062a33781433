// Token expiry: optional expires_in on creation; an expired token stops authenticating at once and is swept.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, scrapeMetrics, WITH_METRICS, type Harness } from '../helpers/app.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { MAX_EXPIRES_IN_S } from '../../src/tokens/expiry.ts';

const as = (secret: string) => ({ 'x-ripple-token': secret });

async function createToken(h: Harness, payload: Record<string, unknown>) {
  const user = await h.createUser();
  const r = await h.api({
    method: 'POST',
    path: '/tokens',
    payload: { id: user.id, password: user.password, ...payload },
  });
  return { user, r };
}

/** Moves a token's expiry (the clock cannot be moved for the database, so the row is). */
async function setExpiry(h: Harness, tokenId: number, expiresAt: number | null) {
  await h.store.db.updateTable('tokens').set({ expires_at: expiresAt }).where('id', '=', tokenId).execute();
}

for (const dialect of DIALECTS) {
  describe(`token expiry [${dialect}]`, () => {
    it('without expires_in, a token has exactly the spec fields and never expires', async (t) => {
      const h = await build(t, dialect);
      const { r } = await createToken(h, {});
      assert.equal(r.statusCode, 200, r.body);
      assert.deepEqual(Object.keys(body(r)).sort(), [
        'banned',
        'code',
        'id',
        'message',
        'privileges',
        'token',
        'username',
      ]);
      const list = await h.api({ method: 'GET', path: '/tokens', headers: as(body(r).token as string) });
      const [token] = body(list).tokens as Array<Record<string, unknown>>;
      assert.deepEqual(Object.keys(token ?? {}).sort(), ['description', 'id', 'last_updated', 'privileges']);
      // null counts as absent
      const { r: withNull } = await createToken(h, { expires_in: null });
      assert.equal(withNull.statusCode, 200, withNull.body);
      assert.equal('expires_at' in body(withNull), false);
    });

    it('with expires_in, the answer and the list carry expires_at, only for that token', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const plain = await h.createToken(user.id);
      const before = nowSeconds();
      const r = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { id: user.id, password: user.password, expires_in: 3600, description: 'an hour' },
      });
      const after = nowSeconds();
      assert.equal(r.statusCode, 200, r.body);
      const expiresAt = body(r).expires_at as number;
      assert.ok(expiresAt >= before + 3600 && expiresAt <= after + 3600, String(expiresAt));
      const secret = body(r).token as string;
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: as(secret) })).statusCode,
        200,
      );
      const list = await h.api({ method: 'GET', path: '/tokens', headers: as(plain.secret) });
      const tokens = body(list).tokens as Array<Record<string, unknown>>;
      assert.equal(tokens.length, 2);
      assert.equal('expires_at' in tokens[0]!, false, 'the token without expiry has no expires_at');
      assert.equal(tokens[1]!.description, 'an hour');
      assert.equal(tokens[1]!.expires_at, expiresAt);
    });

    it('refuses an expires_in of the wrong type or out of range with 400', async (t) => {
      const h = await build(t, dialect);
      for (const expires_in of ['60', 1.5, 0, -5, MAX_EXPIRES_IN_S + 1, true, [60], { s: 60 }]) {
        const { r } = await createToken(h, { expires_in });
        assert.equal(r.statusCode, 400, `${JSON.stringify(expires_in)}: ${r.body}`);
        assert.equal(body(r).code, 400);
        assert.match(String(body(r).message), /expires_in/);
      }
      const { r } = await createToken(h, { expires_in: MAX_EXPIRES_IN_S });
      assert.equal(r.statusCode, 200, r.body);
    });

    it('an expired token stops authenticating at once and is no longer listed', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const keeper = await h.createToken(user.id);
      const { r } = await (async () => ({
        r: await h.api({
          method: 'POST',
          path: '/tokens',
          payload: { id: user.id, password: user.password, expires_in: 60 },
        }),
      }))();
      const secret = body(r).token as string;
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: as(secret) });
      const id = body(self).id as number;
      await setExpiry(h, id, nowSeconds() - 1);
      const ping = await h.api({ method: 'GET', path: '/ping', headers: as(secret) });
      assert.equal(body(ping).user_id, 0, 'an expired token identifies no one');
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: as(secret) })).statusCode,
        404,
      );
      assert.equal((await h.api({ method: 'GET', path: '/tokens', headers: as(secret) })).statusCode, 401);
      const list = await h.api({ method: 'GET', path: '/tokens', headers: as(keeper.secret) });
      assert.deepEqual(
        (body(list).tokens as Array<{ id: number }>).map((x) => x.id),
        [keeper.id],
      );
      // Back in the future, it works again: nothing but the time decides.
      await setExpiry(h, id, nowSeconds() + 60);
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: as(secret) })).statusCode,
        200,
      );
    });

    it('the sweep deletes expired tokens only, and counts them', async (t) => {
      const h = await build(t, dialect, WITH_METRICS);
      const user = await h.createUser();
      const expired = await h.createToken(user.id);
      const later = await h.createToken(user.id);
      const forever = await h.createToken(user.id);
      await setExpiry(h, expired.id, nowSeconds() - 10);
      await setExpiry(h, later.id, nowSeconds() + 3600);
      await h.app.tokend.expiry.sweep();
      const ids = (await h.store.db.selectFrom('tokens').select('id').orderBy('id').execute()).map(
        (r) => r.id,
      );
      assert.deepEqual(ids, [later.id, forever.id]);
      assert.match(await scrapeMetrics(h), /^tokend_tokens_expired_deleted_total 1$/m);
    });
  });
}

describe('expiry sweep timer', () => {
  it('runs on its interval', async (t) => {
    const h = await build(t, 'sqlite', { TOKEN_SWEEP_INTERVAL_S: '1' });
    const user = await h.createUser();
    const token = await h.createToken(user.id);
    await setExpiry(h, token.id, nowSeconds() - 1);
    // Bounded wait for the background sweep (interval 1 s): at most 5 s.
    const deadline = Date.now() + 5000;
    let remaining = 1;
    while (remaining > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      remaining = (await h.store.db.selectFrom('tokens').select('id').execute()).length;
    }
    assert.equal(remaining, 0, 'the background sweep deleted the expired token');
  });
});
