// Stored text never reaches an operator's terminal raw: a description the family's website let a user
// write (`dev␛]0;owned␇␛[2J` sets the terminal's title and clears it), a username with ESC, an
// application name or a security log row with controls are printed by every CLI table and line with each
// control or formatting character as an escape, as text and as --json. `import-ripple` keeps such a
// description as it is and prints safely. New descriptions with look-alike tricks are refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { cliHarness, jsonError } from '../helpers/cli.ts';
import { rippleSourceProblem, signUpOnWebsite, writeFamilyToken } from '../helpers/ripple-schema.ts';
import { createRippleSource } from '../helpers/in-place.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { insertToken } from '../../src/auth/mint.ts';
import { hashTokenSecret, newTokenSecret } from '../../src/auth/secret.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { clientNameKey } from '../../src/oauth/clients.ts';

const HOSTILE = 'dev\u001b]0;owned\u0007\u001b[2J';
const SHOWN = 'dev\\x1b]0;owned\\x07\\x1b[2J';
/** What a terminal acts on or hides: C0 but line feed, DEL, C1, bidi controls and zero-width characters. */
// eslint-disable-next-line no-control-regex -- they are what it finds
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

const assertNoRaw = (output: string, what: string) =>
  assert.doesNotMatch(output, RAW, `${what} printed a control character raw: ${JSON.stringify(output)}`);

for (const dialect of DIALECTS)
  describe(`what the CLI prints of stored text (${dialect})`, () => {
    it('escapes every control and formatting character in token, user and client lists and the audit', async (t) => {
      const h = await cliHarness(t, dialect);
      // The rows as another program could have written them: no rule of tokend's applied.
      const store = await openStore(h.database.config);
      t.after(() => store.close());
      const now = nowSeconds();
      // In place the user is the family website's, in its latin1 column (MariaDB's latin1 is cp1252: no C1
      // control, no U+202E).
      const username = dialect === 'ripple' ? 'eve\u001b[31mred\u001b[2K' : 'eve\u001b[31mred\u009b2K\u202e';
      const userId =
        dialect === 'ripple'
          ? await h.createUser({ username, password: 'x' })
          : await insertUser(store.db, {
              username,
              passwordHash: 'x',
              passwordVersion: 2,
              privileges: 3,
              now,
            });
      const tokenId = await insertToken(store.db, {
        userId,
        privileges: 0,
        description: HOSTILE,
        tokenHash: hashTokenSecret(newTokenSecret()),
        private: false,
        now,
      });
      const name = 'Tracker\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007';
      await store.db
        .insertInto('oauth_clients')
        .values({
          id: 'hostile-client',
          name,
          name_key: clientNameKey('hostile'),
          owner_id: userId,
          avatar: '',
          redirect_uris: JSON.stringify(['https://app.example/cb']),
          secret_hash: null,
          created_at: now,
        })
        .execute();
      await store.db
        .insertInto('security_log')
        .values({
          at: now,
          user_id: userId,
          kind: 'signin.failed',
          means: 'api',
          means_id: null,
          token_id: null,
          client_id: null,
          detail: `password ${HOSTILE}`,
          address: '203.0.113.1',
          user_agent: 'curl\u009b2J\u202eevil',
        })
        .execute();

      for (const args of [
        ['token', 'list', '--user', String(userId)],
        ['user', 'list'],
        ['client', 'list'],
        ['client', 'list', '--owner', String(userId)],
        ['audit', '--user', String(userId)],
      ]) {
        const text = await h.cli(args);
        assert.equal(text.code, 0, text.stderr);
        assertNoRaw(text.stdout, args.join(' '));
        const json = await h.cli([...args, '--json']);
        assert.equal(json.code, 0, json.stderr);
        assertNoRaw(json.stdout, `${args.join(' ')} --json`);
        // --json still says exactly what is stored.
        for (const line of json.stdout.trim().split('\n')) JSON.parse(line);
      }
      const tokens = await h.cli(['token', 'list', '--user', String(userId)]);
      assert.ok(tokens.stdout.includes(SHOWN), tokens.stdout);
      assert.ok(
        (await h.cli(['user', 'list'])).stdout.includes(
          dialect === 'ripple' ? 'eve\\x1b[31mred\\x1b[2K' : 'eve\\x1b[31mred\\x9b2K\\u202e',
        ),
      );
      assert.ok(
        (await h.cli(['client', 'list'])).stdout.includes('Tracker\\x1b]8;;https://evil.example\\x07'),
      );
      const audit = await h.cli(['audit', '--user', String(userId)]);
      assert.ok(audit.stdout.includes(`password ${SHOWN}`), audit.stdout);
      assert.ok(audit.stdout.includes('curl\\x9b2J\\u202eevil'), audit.stdout);
      const listed = JSON.parse(
        (await h.cli(['token', 'list', '--user', String(userId), '--json'])).stdout,
      ) as {
        tokens: Array<{ id: number; description: string }>;
      };
      assert.deepEqual(
        listed.tokens.map((x) => [x.id, x.description]),
        [[tokenId, HOSTILE]],
      );
      // An error naming a stored name is escaped too.
      const revoked = await h.cli(['user', 'ban', '--user', username]);
      assertNoRaw(revoked.stderr + revoked.stdout, 'user ban');
    });
  });

describe('new descriptions from the CLI', () => {
  it('refuses a right-to-left override or a zero-width character, as the API and the page do', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'alice', '--password', 'p']);
    for (const [description, code] of [
      ['pay\u202egnp.exe', 'U+202E'],
      ['pay\u200bpal', 'U+200B'],
    ] as const) {
      const r = await h.cli(['token', 'create', '--user', 'alice', '--description', description, '--json']);
      assert.equal(r.code, 2);
      assert.match(
        jsonError(r).error,
        new RegExp(
          `--description: the description may not contain invisible or formatting characters.*\\(it has ${code.replace('+', '\\+')}\\)`,
        ),
      );
      assertNoRaw(r.stderr, 'the refusal');
    }
  });
});

describe('import-ripple with a description the family let a user write', async () => {
  const skip = await rippleSourceProblem();
  it('imports it as it is, prints safely, and lists it escaped', { skip }, async (t) => {
    const source = await createRippleSource(t);
    await signUpOnWebsite(source.connection, { id: 7, username: 'mallory', password: 'x', privileges: 3 });
    await writeFamilyToken(source.connection, { user: 7, description: HOSTILE, secret: 'a family secret' });
    const h = await cliHarness(t);
    const imported = await h.cli(['import-ripple', '--from', source.url]);
    assert.equal(imported.code, 0, imported.stderr);
    assertNoRaw(imported.stdout + imported.stderr, 'import-ripple');
    const listed = await h.cli(['token', 'list', '--user', 'mallory']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.includes(SHOWN), listed.stdout);
    assertNoRaw(listed.stdout, 'token list');
    const stored = JSON.parse((await h.cli(['token', 'list', '--user', 'mallory', '--json'])).stdout) as {
      tokens: Array<{ description: string }>;
    };
    assert.equal(stored.tokens[0]!.description, HOSTILE);
  });
});
