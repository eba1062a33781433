// The store gives every row as src/store/schema.ts types it: integer columns (ids, privileges, flags,
// Unix times, BIGINT included), counts and maxima as numbers, on every backend, through Kysely and
// through the per-request lookup alike. Callers never convert a row's values (no Number(row.x)).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { registerClient } from '../helpers/oauth.ts';
import { mintSession, mintToken } from '../../src/auth/mint.ts';
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { bearerTokens } from '../../src/oauth/bearer.ts';
import { issueAccessToken } from '../../src/oauth/issue.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { credentialLookup } from '../../src/auth/credential-lookup.ts';

/** Each named field of `row` is a number (or null where `nullable` names it). */
function assertNumbers(row: Record<string, unknown> | undefined, fields: string[], where: string): void {
  assert.ok(row, `${where}: a row`);
  for (const field of fields) {
    const value = row[field];
    assert.ok(
      typeof value === 'number' || value === null,
      `${where}.${field} is ${typeof value} ${JSON.stringify(value)}, not a number`,
    );
  }
}

for (const dialect of DIALECTS) {
  describe(`row types [${dialect}]`, () => {
    it('integer columns, counts and maxima come back as numbers', async (t) => {
      const h = await build(t, dialect);
      const db = h.store.db;
      const now = nowSeconds();
      const user = await h.createUser();
      const act = actOutsideRequest('cli', now);
      const token = await mintToken(db, {
        layout: h.store.layout,
        userId: user.id,
        cap: 'none',
        requested: 0,
        description: 'typed',
        private: false,
        now,
        expiresAt: now + 3600,
        act,
      });
      const stored = await db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      const session = await mintSession(db, {
        userId: user.id,
        now,
        expiresAt: now + 3600,
        passwordHash: stored.password_hash,
      });

      const users = await db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirst();
      assertNumbers(users, ['id', 'privileges', 'password_version', 'created_at'], 'users');
      const tokens = await db.selectFrom('tokens').selectAll().where('user_id', '=', user.id).execute();
      assert.equal(tokens.length, 2);
      for (const row of tokens)
        assertNumbers(
          row,
          [
            'id',
            'user_id',
            'privileges',
            'private',
            'last_updated',
            'expires_at',
            'session',
            'password_at',
            'created_at',
          ],
          'tokens',
        );
      const counted = await db
        .selectFrom('tokens')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('id').as('last')])
        .where('user_id', '=', user.id)
        .executeTakeFirst();
      assertNumbers(counted, ['n', 'last'], 'count and max');
      assert.equal(counted?.n, 2);
      // mintToken logged the token's creation
      const log = await db.selectFrom('security_log').selectAll().where('user_id', '=', user.id).execute();
      assert.ok(log.length > 0);
      for (const row of log)
        assertNumbers(row, ['id', 'at', 'user_id', 'token_id', 'actor_id', 'repeats'], 'log');
      const outbox = await db.selectFrom('event_outbox_state').selectAll().execute();
      for (const row of outbox) assertNumbers(row, ['value'], 'event_outbox_state');

      const client = await registerClient(h, { ownerId: user.id });
      const issued = await issueAccessToken(
        db,
        { clientId: client.id, userId: user.id, scope: 'identify', family: 'f'.repeat(64) },
        now,
      );
      const access = await db.selectFrom('oauth_access_tokens').selectAll().executeTakeFirst();
      assertNumbers(access, ['id', 'user_id', 'created_at', 'expires_at'], 'oauth_access_tokens');
      const clients = await db.selectFrom('oauth_clients').selectAll().executeTakeFirst();
      assertNumbers(clients, ['owner_id', 'created_at'], 'oauth_clients');

      const lookup = credentialLookup(h.store, nowSeconds, bearerTokens);
      for (const secret of [token.secret, session.secret]) {
        const row = await lookup.token(secret);
        assertNumbers(
          row as unknown as Record<string, unknown>,
          [
            'id',
            'user_id',
            'privileges',
            'last_updated',
            'session',
            'password_at',
            'created_at',
            'private',
            'user_privileges',
          ],
          'token lookup',
        );
      }
      const bearer = await lookup.bearer(issued.access_token);
      assertNumbers(
        bearer as unknown as Record<string, unknown>,
        [
          'id',
          'user_id',
          'created_at',
          'expires_at',
          'client_owner_id',
          'client_owner_privileges',
          'user_privileges',
        ],
        'bearer lookup',
      );
    });

    if (dialect === 'postgres')
      it("sets pg's type parsers on the store's pools only, not for every pg client of the process", async (t) => {
        const h = await build(t, dialect);
        const client = new pg.Client({ connectionString: h.database.url });
        await client.connect();
        const { rows } = await client
          .query<{ n: unknown }>('SELECT 1::bigint AS n')
          .finally(() => client.end());
        assert.equal(rows[0]?.n, '1');
      });
  });
}
