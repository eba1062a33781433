// OpenID Connect and the device grant in place on a Ripple-family database (DATABASE_SCHEMA=ripple): the
// signing keys and device codes in tokend's own prefixed tables, an id_token and userinfo naming a user the
// family's website signed up, a device signed in by that user, and a second instance publishing the same keys.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RowDataPacket } from 'mysql2/promise';
import { IN_CI, answers } from '../helpers/dialects.ts';
import { familyDatabase, inPlaceApp, type FamilyDatabase } from '../helpers/in-place.ts';
import { signUpOnWebsite } from '../helpers/ripple-schema.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import {
  decideOnDevicePage,
  exchangeCode,
  obtainCode,
  pkcePair,
  pollDevice,
  registerClient,
  startDevice,
  verifyIdToken,
} from '../helpers/oauth.ts';

const mysqlProblem = await answers('mysql');
if (mysqlProblem !== undefined && IN_CI)
  throw new Error(`CI=true but MariaDB does not answer: ${mysqlProblem}`);

/** A user as the family's website signs one up, named `name`. */
async function signUp(db: FamilyDatabase, name: string) {
  const password = `password of ${name}`;
  const id = await signUpOnWebsite(db.family, { username: name, password, privileges: 3 });
  return { id, username: name, password };
}

describe(
  'OpenID Connect and the device grant in place [mysql]',
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    it('signs a family user in with an id_token, names them in userinfo, and signs a device in; keys live in tokend_ tables', async (t) => {
      const db = await familyDatabase(t);
      const a = await inPlaceApp(t, db);
      const b = await inPlaceApp(t, db);
      const owner = await signUp(db, 'Dev Owner');
      const user = await signUp(db, 'Some Player');
      const client = await registerClient(a, { ownerId: owner.id });
      const browser = new InjectBrowser(a.app);
      await browser.signIn(user);

      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client, challenge, scope: 'openid profile' });
      const tokens = (await exchangeCode(a, client, code, verifier)).json() as Record<string, string>;
      const claims = await verifyIdToken(b, tokens.id_token as string, {
        issuer: 'http://localhost',
        audience: client.id,
      });
      assert.equal(claims.sub, String(user.id));
      assert.equal(claims.preferred_username, 'Some Player');
      const info = await b.app.inject({
        url: '/oauth/userinfo',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.deepEqual(info.json(), { sub: String(user.id), preferred_username: 'Some Player' });

      const started = (await startDevice(a, client, 'openid')).json() as {
        device_code: string;
        user_code: string;
      };
      assert.equal((await decideOnDevicePage(browser, started.user_code, 'allow')).statusCode, 200);
      const polled = await pollDevice(b, client, started.device_code);
      assert.equal(polled.statusCode, 200, polled.body);
      const self = await b.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${(polled.json() as { access_token: string }).access_token}` },
      });
      assert.equal((self.json() as { user_id: number }).user_id, user.id);

      const [tables] = await db.family.query<RowDataPacket[]>(
        `SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('tokend_oauth_signing_keys', 'tokend_oauth_device_codes', 'oauth_signing_keys', 'oauth_device_codes') ORDER BY TABLE_NAME`,
      );
      assert.deepEqual(
        tables.map((r) => r.name),
        ['tokend_oauth_device_codes', 'tokend_oauth_signing_keys'],
      );
      const [keys] = await db.family.query<RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM tokend_oauth_signing_keys',
      );
      assert.equal(Number(keys[0]?.n), 1, 'two instances, one key');
    });
  },
);
