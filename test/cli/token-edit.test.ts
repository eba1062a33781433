// tokend token edit: a public API token's description and privileges change under the same secret, the
// privileges within what the owner may hold, each change in the owner's security log; on every backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { cliHarness, jsonError, type CliHarness } from '../helpers/cli.ts';

async function self(h: CliHarness, secret: string) {
  const app = await h.app();
  const r = await app.inject({
    method: 'GET',
    url: '/api/v1/tokens/self',
    headers: { 'x-ripple-token': secret },
  });
  const { id, privileges, description } = r.json() as { privileges: number; description: string; id: number };
  return { id, privileges, description };
}

/** The user's token.edited events, from `tokend audit --json` (one JSON line each). */
async function edits(h: CliHarness, user: string) {
  const r = await h.cli(['audit', '--user', user, '--kind', 'token.edited', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { token_id: number; detail: string });
}

for (const dialect of DIALECTS)
  describe(`tokend token edit [${dialect}]`, () => {
    it('changes the description and privileges under the same secret, within the owner’s, and logs it', async (t) => {
      const h = await cliHarness(t, dialect);
      const alice = await h.createUser({ username: 'alice', password: 'p' });
      const made = await h.json([
        'token',
        'create',
        '--user',
        'alice',
        '--privileges',
        '6',
        '--description',
        'one',
      ]);
      const secret = made.token as string;

      const edited = await h.json([
        'token',
        'edit',
        '--id',
        String(made.id),
        '--privileges',
        '2',
        '--description',
        'read-only',
      ]);
      assert.deepEqual(edited, {
        id: made.id,
        user_id: alice,
        privileges: 2,
        description: 'read-only',
        changed: ['description', 'privileges 6 → 2 (ReadConfidential)'],
        not_granted: [],
      });
      assert.deepEqual(await self(h, secret), { id: made.id, privileges: 2, description: 'read-only' });

      // Beyond what alice may hold: the admin bit is dropped and named, as at creation.
      const beyond = await h.json([
        'token',
        'edit',
        '--id',
        String(made.id),
        '--privileges',
        'ReadConfidential,Write,ManageUser',
      ]);
      assert.equal(beyond.privileges, 6);
      assert.deepEqual(beyond.not_granted, ['ManageUser']);
      assert.equal((await self(h, secret)).privileges, 6);

      // The same again changes nothing and logs nothing.
      const same = await h.cli(['token', 'edit', '--id', String(made.id), '--privileges', '6']);
      assert.equal(same.code, 0, same.stderr);
      assert.match(same.stdout, /^Nothing changed\.$/m);

      const details = (await edits(h, 'alice')).map((e) => [e.token_id, e.detail]);
      assert.deepEqual(details.sort(), [
        [made.id, 'description; privileges 6 → 2 (ReadConfidential)'],
        [made.id, 'privileges 2 → 6 (ReadConfidential | Write)'],
      ]);
    });

    it('refuses what it cannot do, and changes nothing', async (t) => {
      const h = await cliHarness(t, dialect);
      await h.createUser({ username: 'bob', password: 'p' });
      const made = await h.json([
        'token',
        'create',
        '--user',
        'bob',
        '--privileges',
        '2',
        '--description',
        'keep',
      ]);
      const id = String(made.id);
      const nothing = await h.cli(['token', 'edit', '--id', id, '--json']);
      assert.equal(nothing.code, 2);
      assert.match(jsonError(nothing).error, /nothing to change/);
      const lookAlike = await h.cli([
        'token',
        'edit',
        '--id',
        id,
        '--description',
        'pay\u202Egnp.exe',
        '--json',
      ]);
      assert.equal(lookAlike.code, 2);
      assert.match(jsonError(lookAlike).error, /^--description: the description /);
      const missing = await h.cli(['token', 'edit', '--id', '999999', '--privileges', '2', '--json']);
      assert.equal(missing.code, 1);
      assert.match(jsonError(missing).error, /no public API token with id 999999/);
      const hidden = await h.json(['token', 'create', '--user', 'bob', '--private']);
      const onPrivate = await h.cli([
        'token',
        'edit',
        '--id',
        String(hidden.id),
        '--description',
        'x',
        '--json',
      ]);
      assert.equal(onPrivate.code, 1, 'a private token is not edited');
      assert.deepEqual(await self(h, made.token as string), {
        id: made.id,
        privileges: 2,
        description: 'keep',
      });
      assert.deepEqual(await edits(h, 'bob'), []);
    });
  });
