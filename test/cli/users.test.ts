// tokend user …: each command through a child process, checked through the HTTP API on the same database.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/store/database.ts';
import { setUserPrivileges } from '../../src/users/repository.ts';
import { cliHarness, jsonError, onlyJson, type CliHarness } from '../helpers/cli.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';

async function login(h: CliHarness, username: string, password: string) {
  const app = await h.app();
  const r = await app.inject({ method: 'POST', url: '/api/v1/tokens', payload: { username, password } });
  return r.json() as { code: number; banned?: boolean; token?: string; id?: number };
}

describe('tokend user', { concurrency: 4 }, () => {
  it('create prints the new id (JSON and text); the user can log in over HTTP', async (t) => {
    const h = await cliHarness(t);
    const created = await h.json(['user', 'create', '--username', 'Alice Smith', '--password', 'pw 1']);
    assert.deepEqual(Object.keys(created).sort(), [
      'banned',
      'id',
      'password_version',
      'privileges',
      'username',
    ]);
    assert.equal(created.banned, false);
    assert.equal(typeof created.id, 'number');
    assert.equal(created.username, 'Alice Smith');
    assert.equal(created.privileges, 3);
    assert.equal(created.password_version, 2);

    const text = await h.cli(['user', 'create', '--username', 'bob', '--password', 'x']);
    assert.equal(text.code, 0, text.stderr);
    const bobId = (created.id as number) + 1;
    assert.match(text.stdout, new RegExp(`Created user ${bobId} bob`));
    assert.ok(!text.stdout.includes('\u001b['), 'no colour when stdout is not a terminal');

    const ok = await login(h, 'alice_smith', 'pw 1');
    assert.equal(ok.code, 200);
    assert.equal(ok.id, created.id);
    assert.equal((await login(h, 'Alice Smith', 'wrong')).code, 403);
  });

  it('create takes --user-id, --privileges (number or names) and --password-version 1 (a 418 at login)', async (t) => {
    const h = await cliHarness(t);
    const a = await h.json([
      'user',
      'create',
      '--username',
      'a',
      '--password',
      'p',
      '--user-id',
      '4000',
      '--privileges',
      '571',
    ]);
    assert.equal(a.id, 4000);
    assert.equal(a.privileges, 571);
    const b = await h.json([
      'user',
      'create',
      '--username',
      'b',
      '--password',
      'p',
      '--privileges',
      'userpublic+UserNormal,UserDonor',
    ]);
    assert.equal(b.id, 4001, 'the next id follows the largest one in use');
    assert.equal(b.privileges, 7);
    const legacy = await h.json([
      'user',
      'create',
      '--username',
      'old',
      '--password',
      'p',
      '--password-version',
      '1',
    ]);
    assert.equal(legacy.password_version, 1);
    assert.equal((await login(h, 'old', 'p')).code, 418);
  });

  it('create refuses a taken username (also after normalisation) or id, with exit code 1', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'Taken Name', '--password', 'p', '--user-id', '7']);
    const sameName = await h.cli(['user', 'create', '--username', 'taken_name', '--password', 'p', '--json']);
    assert.equal(sameName.code, 1);
    assert.deepEqual(jsonError(sameName), {
      error: 'a user named "Taken Name" already exists (id 7)',
      code: 'failed',
    });
    const sameId = await h.cli([
      'user',
      'create',
      '--username',
      'other',
      '--password',
      'p',
      '--user-id',
      '7',
    ]);
    assert.equal(sameId.code, 1);
    assert.match(sameId.stderr, /user id 7 is already taken/);
    const users = await h.json(['user', 'list']);
    assert.equal((users.users as unknown[]).length, 1);
  });

  it('--password - reads the password from standard input', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'carol', '--password', '-'], { input: 'from stdin\n' });
    assert.equal((await login(h, 'carol', 'from stdin')).code, 200);
    await h.json(['user', 'passwd', '--user', 'carol', '--password', '-'], { input: 'second' });
    assert.equal((await login(h, 'carol', 'second')).code, 200);
  });

  it('set-privileges replaces the privileges, by id or by username', async (t) => {
    const h = await cliHarness(t);
    const u = await h.json(['user', 'create', '--username', 'dave', '--password', 'p']);
    const byName = await h.json(['user', 'set-privileges', '--user', 'dave', '--privileges', '15']);
    assert.deepEqual(byName, {
      id: u.id,
      username: 'dave',
      privileges: 15,
      banned: false,
      previous_privileges: 3,
    });
    const byId = await h.json([
      'user',
      'set-privileges',
      '--user',
      String(u.id),
      '--privileges',
      'UserPublic',
    ]);
    assert.equal(byId.privileges, 1);
    assert.equal(byId.banned, true);
    assert.equal((await login(h, 'dave', 'p')).code, 402);
  });

  it('privileges that ban or restrict the user are accepted, and create and set-privileges say which', async (t) => {
    const h = await cliHarness(t);
    const created = await h.json([
      'user',
      'create',
      '--username',
      'fay',
      '--password',
      'p',
      '--privileges',
      '1',
    ]);
    assert.equal(created.banned, true);
    assert.match(
      String(created.warning),
      /^privileges 1 ban the user \(an active user holds both UserPublic and UserNormal\)/,
    );
    assert.equal((await login(h, 'fay', 'p')).code, 402);

    const text = await h.cli([
      'user',
      'create',
      '--username',
      'gus',
      '--password',
      'p',
      '--privileges',
      'UserNormal,UserDonor',
    ]);
    assert.equal(text.code, 0, text.stderr);
    // UserNormal without UserPublic: restricted, not banned; their tokens keep what limit() allows
    assert.match(
      text.stdout,
      /^Created user \d+ gus, privileges 6 .*\nWarning: privileges 6 restrict the user \(UserNormal without UserPublic\): they cannot log in or create tokens, and their tokens keep what their privileges allow; "tokend user unban" lifts it\.\n$/,
    );
    assert.equal((await login(h, 'gus', 'p')).code, 402);

    const fine = await h.json(['user', 'create', '--username', 'hal', '--password', 'p']);
    assert.equal(fine.banned, false);
    assert.equal(fine.warning, undefined);
    const demoted = await h.json([
      'user',
      'set-privileges',
      '--user',
      'hal',
      '--privileges',
      'UserPublic,UserDonor',
    ]);
    assert.equal(demoted.banned, true);
    assert.match(String(demoted.warning), /^privileges 5 ban the user/);
    const demotedText = await h.cli(['user', 'set-privileges', '--user', 'hal', '--privileges', '4']);
    assert.match(demotedText.stdout, /privileges 5 → 4 .*\nWarning: privileges 4 ban the user/);
    const restored = await h.json(['user', 'set-privileges', '--user', 'hal', '--privileges', '7']);
    assert.equal(restored.banned, false);
    assert.equal(restored.warning, undefined);
    const restoredText = await h.cli(['user', 'set-privileges', '--user', 'hal', '--privileges', '3']);
    assert.doesNotMatch(restoredText.stdout, /Warning/);
  });

  it('user privileges with a bit no user privilege has are refused, and nothing changes', async (t) => {
    const h = await cliHarness(t);
    await h.json([
      'user',
      'create',
      '--username',
      'ivy',
      '--password',
      'p',
      '--privileges',
      'UserPublic,UserNormal,AdminCaker',
    ]);
    for (const args of [
      ['user', 'create', '--username', 'jo', '--password', 'p', '--privileges', String(2 ** 23 + 3)],
      ['user', 'set-privileges', '--user', 'ivy', '--privileges', String(2 ** 23 + 3)],
      ['user', 'set-privileges', '--user', 'ivy', '--privileges', String(2 ** 31)],
      ['user', 'set-privileges', '--user', 'ivy', '--privileges', String(2 ** 52)],
    ]) {
      const r = await h.cli([...args, '--json']);
      assert.equal(r.code, 2, args.join(' '));
      const { error, code } = jsonError(r);
      assert.equal(code, 'usage');
      assert.match(error, /^--privileges: \d+ has the bit \d+, which is no user privilege;/);
    }
    const { users } = (await h.json(['user', 'list'])) as {
      users: Array<{ username: string; privileges: number }>;
    };
    assert.deepEqual(
      users.map((u) => [u.username, u.privileges]),
      [['ivy', 3 + 2 ** 22]],
    );
  });

  it('ban clears UserPublic and UserNormal only; unban sets both; a banned user gets 402', async (t) => {
    const h = await cliHarness(t);
    await h.json([
      'user',
      'create',
      '--username',
      'erin',
      '--password',
      'p',
      '--privileges',
      String(3 + 4 + 8),
    ]);
    const banned = await h.json(['user', 'ban', '--user', 'erin']);
    assert.equal(banned.privileges, 4 + 8);
    assert.equal(banned.banned, true);
    const refused = await login(h, 'erin', 'p');
    assert.equal(refused.code, 402);
    assert.equal(refused.banned, true);
    const again = await h.json(['user', 'ban', '--user', 'erin']);
    assert.equal(again.privileges, 12, 'banning twice changes nothing');
    const unbanned = await h.json(['user', 'unban', '--user', 'erin']);
    assert.equal(unbanned.privileges, 15);
    assert.equal(unbanned.banned, false);
    assert.equal((await login(h, 'erin', 'p')).code, 200);
  });

  it('ban and unban keep bits above 2^31 that a user already holds (e.g. in an imported database)', async (t) => {
    const h = await cliHarness(t);
    const high = 2 ** 40 + 2 ** 33 + 3;
    const { id } = await h.json(['user', 'create', '--username', 'hi', '--password', 'p']);
    // The CLI sets only known bits; a database from elsewhere may hold others.
    const store = await openStore(h.database.config, { migrate: false });
    try {
      await setUserPrivileges(store.db, id as number, high, 0, actOutsideRequest('cli', nowSeconds()));
    } finally {
      await store.close();
    }
    assert.equal((await h.json(['user', 'ban', '--user', 'hi'])).privileges, high - 3);
    assert.equal((await h.json(['user', 'unban', '--user', 'hi'])).privileges, high);
  });

  it('passwd sets a version 2 password: a legacy user can log in again, the old password fails', async (t) => {
    const h = await cliHarness(t);
    const u = await h.json([
      'user',
      'create',
      '--username',
      'frank',
      '--password',
      'old',
      '--password-version',
      '1',
    ]);
    const changed = await h.json(['user', 'passwd', '--user', String(u.id), '--password', 'new']);
    assert.deepEqual(changed, { id: u.id, username: 'frank', password_version: 2, sessions_ended: 0 });
    assert.equal((await login(h, 'frank', 'new')).code, 200);
    assert.equal((await login(h, 'frank', 'old')).code, 403);
  });

  it("passwd ends every web session of the user (and no one else's); API tokens stay", async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'gina', '--password', 'old']);
    await h.json(['user', 'create', '--username', 'hal', '--password', 'pw']);
    const app = await h.app();
    const gina = [new InjectBrowser(app), new InjectBrowser(app)];
    for (const b of gina) await b.signIn({ id: 0, username: 'gina', password: 'old' });
    const hal = new InjectBrowser(app);
    await hal.signIn({ id: 0, username: 'hal', password: 'pw' });
    const api = (await login(h, 'gina', 'old')).token as string;

    const changed = await h.json(['user', 'passwd', '--user', 'gina', '--password', '-'], { input: 'new\n' });
    assert.equal(changed.sessions_ended, 2);
    for (const b of gina) assert.equal((await b.get('/tokens')).statusCode, 303, 'signed out');
    assert.equal((await hal.get('/tokens')).statusCode, 200, 'another user stays signed in');
    const self = await app.inject({ url: '/api/v1/tokens/self', headers: { 'x-ripple-token': api } });
    assert.equal(self.statusCode, 200, 'API tokens are not sessions');
  });

  it('sign-out-everywhere ends every session, API token and OAuth grant of the user', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'ivy', '--password', 'pw']);
    await h.json(['user', 'create', '--username', 'jon', '--password', 'pw']);
    const client = await h.json([
      'client',
      'create',
      '--name',
      'App',
      '--redirect-uri',
      'https://app.example/cb',
      '--owner',
      'jon',
    ]);
    const bearer = await h.json([
      'client',
      'token',
      '--client',
      String(client.id),
      '--user',
      'ivy',
      '--scope',
      'write',
    ]);
    const app = await h.app();
    const browser = new InjectBrowser(app);
    await browser.signIn({ id: 0, username: 'ivy', password: 'pw' });
    const api = (await login(h, 'ivy', 'pw')).token as string;
    const jons = (await login(h, 'jon', 'pw')).token as string;
    const self = (headers: Record<string, string>) => app.inject({ url: '/api/v1/tokens/self', headers });
    assert.equal((await self({ authorization: `Bearer ${String(bearer.access_token)}` })).statusCode, 200);

    const text = await h.cli(['user', 'sign-out-everywhere', '--user', 'ivy']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /1 web session ended, 1 API token and 1 OAuth token revoked/);
    assert.equal((await self({ 'x-ripple-token': api })).statusCode, 404);
    assert.equal((await self({ authorization: `Bearer ${String(bearer.access_token)}` })).statusCode, 404);
    assert.equal((await browser.get('/tokens')).statusCode, 303);
    assert.equal((await self({ 'x-ripple-token': jons })).statusCode, 200, "another user's token stays");
    const again = await h.json(['user', 'sign-out-everywhere', '--user', 'ivy']);
    assert.deepEqual(again, {
      id: again.id,
      username: 'ivy',
      sessions_ended: 0,
      api_tokens_revoked: 0,
      oauth_tokens_revoked: 0,
      applications_disconnected: 0,
    });
  });

  it('--password-stdin reads the password from standard input; it never appears in the arguments', async (t) => {
    const h = await cliHarness(t);
    const created = await h.json(['user', 'create', '--username', 'kim', '--password-stdin'], {
      input: 'from stdin 1\n',
    });
    assert.equal(created.username, 'kim');
    assert.equal((await login(h, 'kim', 'from stdin 1')).code, 200);
    await h.json(['user', 'passwd', '--user', 'kim', '--password-stdin'], { input: 'second one\n' });
    assert.equal((await login(h, 'kim', 'second one')).code, 200);
    assert.equal((await login(h, 'kim', 'from stdin 1')).code, 403);
    const empty = await h.cli(['user', 'passwd', '--user', 'kim', '--password-stdin'], { input: '\n' });
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /must not be empty/);
  });

  it('list shows every user in id order with the banned flag', async (t) => {
    const h = await cliHarness(t);
    assert.deepEqual(await h.json(['user', 'list']), { users: [] });
    await h.json(['user', 'create', '--username', 'g1', '--password', 'p', '--user-id', '20']);
    await h.json([
      'user',
      'create',
      '--username',
      'g2',
      '--password',
      'p',
      '--user-id',
      '10',
      '--privileges',
      '2',
    ]);
    assert.deepEqual(await h.json(['user', 'list']), {
      users: [
        { id: 10, username: 'g2', privileges: 2, banned: true },
        { id: 20, username: 'g1', privileges: 3, banned: false },
      ],
    });
    const text = await h.cli(['user', 'list']);
    assert.equal(text.code, 0);
    assert.match(
      text.stdout,
      /^ID\s+USERNAME\s+PRIVILEGES\s+STATE\n10\s+g2\s+2\s+banned\n20\s+g1\s+3\s+active\n$/,
    );
  });

  it('an unknown user: message on stderr, exit code 1, for every command that takes --user', async (t) => {
    const h = await cliHarness(t);
    for (const args of [
      ['user', 'set-privileges', '--user', 'nobody', '--privileges', '3'],
      ['user', 'ban', '--user', '99'],
      ['user', 'unban', '--user', 'nobody'],
      ['user', 'passwd', '--user', 'nobody', '--password', 'x'],
      ['token', 'create', '--user', 'nobody'],
      ['token', 'list', '--user', '12345'],
    ]) {
      const r = await h.cli([...args, '--json']);
      assert.equal(r.code, 1, args.join(' '));
      const { error, code } = jsonError(r);
      assert.equal(code, 'failed');
      assert.match(error, /^no user with id or username "(nobody|99|12345)"$/);
      const text = await h.cli(args);
      assert.equal(text.code, 1, args.join(' '));
      assert.match(text.stderr, /^tokend: no user with id or username "(nobody|99|12345)"\n$/);
    }
  });

  it('prints exactly one JSON object with --json, whatever the command', async (t) => {
    const h = await cliHarness(t);
    const r = await h.cli(['user', 'create', '--username', 'j', '--password', 'p', '--json']);
    assert.equal(r.code, 0);
    assert.equal(onlyJson(r).username, 'j');
    assert.ok(r.stdout.endsWith('}\n'));
  });
});
