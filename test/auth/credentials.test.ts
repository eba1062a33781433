// The credential core (src/auth/credentials.ts): one expiry rule read from the clock it is given, for
// API tokens, web sessions and bearer tokens alike; a session is found only as a session; the identity
// carries limit(what the credential holds, the owner's privileges now).
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { credentialCore } from '../../src/auth/credentials.ts';
import { credentialLookup } from '../../src/auth/credential-lookup.ts';
import { startSession, SESSION_TTL_S } from '../../src/auth/sessions.ts';
import { insertAccessToken, insertClient } from '../../src/oauth/repository.ts';
import { bearerTokens } from '../../src/oauth/bearer.ts';
import { LastUsedBatcher } from '../../src/auth/last-used.ts';
import { hashTokenSecret, newTokenSecret } from '../../src/auth/secret.ts';
import { TokenPrivilege, UserPrivilege } from '../../src/auth/privileges.ts';

for (const dialect of DIALECTS) {
  describe(`credential core [${dialect}]`, () => {
    it('finds an API token while the clock is before its expiry, and not from its expiry on', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const { secret, id } = await h.createToken(user.id);
      const expiresAt = 2_000_000_000;
      await h.store.db.updateTable('tokens').set({ expires_at: expiresAt }).where('id', '=', id).execute();
      assert.equal(
        (await credentialLookup(h.store, () => expiresAt - 1, bearerTokens).token(secret))?.id,
        id,
      );
      assert.equal(await credentialLookup(h.store, () => expiresAt, bearerTokens).token(secret), undefined);
      assert.equal(
        await credentialLookup(h.store, () => expiresAt + 1, bearerTokens).token(secret),
        undefined,
      );
    });

    it('finds a web session only as a session, and only until it expires', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const started = 1_900_000_000;
      const stored = await h.store.db
        .selectFrom('users')
        .select(['id', 'password_hash'])
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      const session = await startSession(h.store.db, stored, actOutsideRequest('web', started));
      const api = await h.createToken(user.id, { private: true });
      const lastUsed = new LastUsedBatcher(h.store.db, h.app.log);
      const at = (now: number) =>
        credentialCore({ store: h.store, clock: () => now, lastUsed, bearerTokens });

      const found = await at(started + 1).session(session.secret);
      assert.deepEqual(found, {
        id: session.id,
        userId: user.id,
        username: user.username,
        userPrivileges: 3,
        passwordAt: started,
        // the sign-in's time: OpenID Connect's auth_time
        signedInAt: started,
      });
      assert.equal(await at(started + SESSION_TTL_S).session(session.secret), undefined);
      // An API token (even a private one) in the cookie signs no one in; nor does an empty or huge value.
      assert.equal(await at(started + 1).session(api.secret), undefined);
      assert.equal(await at(started + 1).session(''), undefined);
      assert.equal(await at(started + 1).session(undefined), undefined);
      assert.equal(await at(started + 1).session(session.secret.repeat(20)), undefined);
    });

    it('identifies a bearer token by its scope limited by the owner, until it expires, then falls back to API tokens', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser({ privileges: UserPrivilege.UserPublic | UserPrivilege.UserNormal });
      await insertClient(h.store.db, {
        id: 'client-core-test',
        name: 'Core test',
        owner_id: user.id,
        avatar: '',
        redirect_uris: '["https://example.test/cb"]',
        secret_hash: null,
        created_at: 1,
      });
      const secret = newTokenSecret();
      const expiresAt = 1_950_000_000;
      await insertAccessToken(h.store.db, {
        token_hash: hashTokenSecret(secret),
        client_id: 'client-core-test',
        user_id: user.id,
        scope: 'read_confidential write',
        family: 'family-core-test',
        created_at: 1_700_000_000,
        expires_at: expiresAt,
      });
      const lastUsed = new LastUsedBatcher(h.store.db, h.app.log);
      const at = (now: number) =>
        credentialCore({ store: h.store, clock: () => now, lastUsed, bearerTokens });

      const identity = await at(expiresAt - 1).identify(secret, true);
      assert.ok(identity.kind === 'bearer', identity.kind);
      assert.equal(identity.userId, user.id);
      assert.equal(identity.scope, 'read_confidential write');
      assert.equal(identity.created, '2023-11-14T22:13:20Z');
      assert.deepEqual(identity.client, {
        id: 'client-core-test',
        name: 'Core test',
        owner_id: user.id,
        avatar: '',
      });
      assert.equal(identity.privileges, TokenPrivilege.ReadConfidential | TokenPrivilege.Write);
      // The owner's privileges as stored now: banned, the same token carries nothing.
      await h.store.db
        .updateTable('users')
        .set({ privileges: UserPrivilege.UserPublic })
        .where('id', '=', user.id)
        .execute();
      const banned = await at(expiresAt - 1).identify(secret, true);
      assert.ok(banned.kind === 'bearer');
      assert.equal(banned.privileges, 0);
      await h.store.db
        .updateTable('users')
        .set({ privileges: UserPrivilege.UserPublic | UserPrivilege.UserNormal })
        .where('id', '=', user.id)
        .execute();

      // Expired: not a bearer token any more, and not an API token either.
      assert.deepEqual(await at(expiresAt).identify(secret, true), { kind: 'none' });
      // Not sent as a bearer token: the access token is never looked for.
      assert.deepEqual(await at(expiresAt - 1).identify(secret, false), { kind: 'none' });
      // An API token sent as a bearer token is still an API token.
      const api = await h.createToken(user.id);
      const asBearer = await at(expiresAt - 1).identify(api.secret, true);
      assert.equal(asBearer.kind, 'token');
      // No secret: no identity, at once (no promise, no query).
      assert.deepEqual(at(expiresAt - 1).identify(undefined, true), { kind: 'none' });
    });
  });
}
