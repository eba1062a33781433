// tokend token …: tokens issued by the CLI work over HTTP; listing and revoking; every dialect's flow.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../src/store/database.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { cliHarness, jsonError, type CliHarness } from '../helpers/cli.ts';

const ADMIN = 1 + 2 + 8 + 16 + 32 + 512; // active + AdminAccessRAP, ManageUsers, BanUsers, ManageServer

async function get(h: CliHarness, path: string, secret: string) {
  const app = await h.app();
  const r = await app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { 'x-ripple-token': secret } });
  return { status: r.statusCode, body: r.json() as Record<string, unknown> };
}

describe('tokend token', { concurrency: 4 }, () => {
  it('create prints the id and the secret; the secret authenticates over HTTP', async (t) => {
    const h = await cliHarness(t);
    const user = await h.json(['user', 'create', '--username', 'alice', '--password', 'p']);
    const token = await h.json([
      'token',
      'create',
      '--user',
      'alice',
      '--privileges',
      '6',
      '--description',
      'from the CLI',
    ]);
    assert.deepEqual(Object.keys(token).sort(), [
      'description',
      'id',
      'not_granted',
      'private',
      'privileges',
      'token',
      'user_id',
      'username',
    ]);
    assert.match(token.token as string, /^[0-9a-f]{32}$/);
    assert.equal(token.user_id, user.id);
    assert.equal(token.privileges, 6);
    assert.equal(token.private, false);
    assert.deepEqual(token.not_granted, []);

    const self = await get(h, '/tokens/self', token.token as string);
    assert.equal(self.status, 200);
    assert.equal(self.body.id, token.id);
    assert.equal(self.body.privileges, 6);
    assert.equal(self.body.description, 'from the CLI');
    const ping = await get(h, '/ping', token.token as string);
    assert.equal(ping.body.user_id, user.id);

    const text = await h.cli(['token', 'create', '--user', String(user.id)]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Token \d+ for user \d+ alice: privileges 0 \(none\), public$/m);
    const secret = /Secret \(shown only once\): ([0-9a-f]{32})$/m.exec(text.stdout)?.[1];
    assert.ok(secret, text.stdout);
    assert.equal((await get(h, '/tokens/self', secret)).status, 200);
  });

  it('create limits the privileges to what the owner may hold, by number or by names', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'admin', '--password', 'p', '--privileges', String(ADMIN)]);
    await h.json(['user', 'create', '--username', 'plain', '--password', 'p']);
    const admin = await h.json([
      'token',
      'create',
      '--user',
      'admin',
      '--privileges',
      'ManageUser,APIMeta,Blog,Read,Write',
    ]);
    assert.equal(admin.privileges, 128 + 2048 + 4, 'Blog needs AdminChatMod; Read is never granted');
    assert.deepEqual(admin.not_granted, ['Read', 'Blog'], 'the names limit() dropped, in bit order');
    const plain = await h.json(['token', 'create', '--user', 'plain', '--privileges', String(2 ** 53 - 1)]);
    assert.equal(plain.privileges, 2 + 4 + 8192, 'ReadConfidential, Write and Bancho need only UserNormal');
    assert.ok(Array.isArray(plain.not_granted) && plain.not_granted.includes('ManageUser'));
    assert.ok(
      !(plain.not_granted as string[]).some((n) => ['ReadConfidential', 'Write', 'Bancho'].includes(n)),
    );
    const text = await h.cli(['token', 'create', '--user', 'plain', '--privileges', 'Write,ManageUser']);
    assert.match(text.stdout, /Not granted \(the owner may not hold them\): ManageUser/);

    const fix = await (
      await h.app()
    ).inject({
      method: 'POST',
      url: '/api/v1/tokens/fix_privileges?id=self',
      headers: { 'x-ripple-token': admin.token as string },
    });
    assert.equal(fix.statusCode, 200, 'ManageUser + APIMeta from the CLI allow fix_privileges');
  });

  it('a token of a banned owner identifies them but carries no privileges while they are banned', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'b', '--password', 'p', '--privileges', String(3 + 8)]);
    await h.json(['user', 'ban', '--user', 'b']);
    // Write needs UserNormal, which the ban took; ViewUserAdvanced needs only AdminAccessRAP, which stays.
    const text = await h.cli(['token', 'create', '--user', 'b', '--privileges', 'Write,ViewUserAdvanced']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /privileges 64 \(ViewUserAdvanced\)/);
    assert.match(text.stdout, /The owner is banned/);
    const secret = /([0-9a-f]{32})$/m.exec(text.stdout)?.[1] ?? '';
    const whileBanned = await get(h, '/tokens/self', secret);
    assert.equal(whileBanned.status, 200);
    assert.equal(whileBanned.body.privileges, 0);
    await h.json(['user', 'unban', '--user', 'b']);
    assert.equal((await get(h, '/tokens/self', secret)).body.privileges, 64);
  });

  it('list shows private tokens too, never secrets or hashes; HTTP lists only public ones', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'carol', '--password', 'p']);
    const pub = await h.json(['token', 'create', '--user', 'carol', '--description', 'public one']);
    const priv = await h.json(['token', 'create', '--user', 'carol', '--private', '--privileges', '2']);
    assert.equal(priv.private, true);

    const r = await h.cli(['token', 'list', '--user', 'carol', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const listed = JSON.parse(r.stdout) as { user_id: number; tokens: Array<Record<string, unknown>> };
    assert.deepEqual(
      listed.tokens.map((tk) => ({ ...tk, last_updated: typeof tk.last_updated })),
      [
        {
          id: pub.id,
          privileges: 0,
          description: 'public one',
          private: false,
          session: false,
          last_updated: 'number',
          expires_at: null,
        },
        {
          id: priv.id,
          privileges: 2,
          description: '',
          private: true,
          session: false,
          last_updated: 'number',
          expires_at: null,
        },
      ],
    );
    for (const secret of [pub.token, priv.token] as string[]) assert.ok(!r.stdout.includes(secret));
    assert.doesNotMatch(r.stdout, /[0-9a-f]{64}/, 'no SHA-256 hash either');

    const overHttp = await get(h, '/tokens', priv.token as string);
    assert.deepEqual(
      (overHttp.body.tokens as Array<{ id: number }>).map((tk) => tk.id),
      [pub.id],
    );
    assert.deepEqual(
      await h.json(['token', 'list', '--user', 'nobody-else']).catch(() => 'refused'),
      'refused',
    );
  });

  it('list shows when each token expires (never, or the UTC time)', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'dan', '--password', 'p']);
    const lasting = await h.json(['token', 'create', '--user', 'dan', '--description', 'lasting']);
    const expiring = await h.json(['token', 'create', '--user', 'dan', '--description', 'expiring']);
    const expiresAt = Date.UTC(2099, 0, 2, 3, 4, 5) / 1000;
    const store = await openStore(h.database.config, { migrate: false });
    try {
      await store.db
        .updateTable('tokens')
        .set({ expires_at: expiresAt })
        .where('id', '=', expiring.id as number)
        .execute();
    } finally {
      await store.close();
    }
    const listed = (await h.json(['token', 'list', '--user', 'dan'])) as {
      tokens: Array<{ id: number; expires_at: number | null }>;
    };
    assert.deepEqual(
      listed.tokens.map((tk) => [tk.id, tk.expires_at]),
      [
        [lasting.id, null],
        [expiring.id, expiresAt],
      ],
    );
    const text = await h.cli(['token', 'list', '--user', 'dan']);
    assert.equal(text.code, 0, text.stderr);
    const [header, ...rows] = text.stdout.trimEnd().split('\n');
    assert.match(header ?? '', /\bEXPIRES \(UTC\)/);
    assert.match(rows[0] ?? '', new RegExp(`^${lasting.id}\\s.*\\snever\\s+lasting$`));
    assert.match(rows[1] ?? '', new RegExp(`^${expiring.id}\\s.*\\s2099-01-02 03:04:05\\s+expiring$`));
  });

  it('revoke deletes the token at once; revoking an unknown id is exit code 1', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'dan', '--password', 'p']);
    const token = await h.json(['token', 'create', '--user', 'dan']);
    assert.equal((await get(h, '/tokens/self', token.token as string)).status, 200);
    assert.deepEqual(await h.json(['token', 'revoke', '--id', String(token.id)]), {
      id: token.id,
      revoked: true,
    });
    assert.equal((await get(h, '/tokens/self', token.token as string)).status, 404);
    const again = await h.cli(['token', 'revoke', '--id', String(token.id), '--json']);
    assert.equal(again.code, 1, 'a failure, not a usage mistake');
    assert.deepEqual(jsonError(again), { error: `no token with id ${token.id}`, code: 'failed' });
    const text = await h.cli(['token', 'revoke', '--id', String(token.id)]);
    assert.equal(text.code, 1);
    assert.equal(text.stderr, `tokend: no token with id ${token.id}\n`);
  });

  it('create stops at TOKENS_PER_USER_MAX (exit 1, nothing stored) unless --force', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'capped', '--password', 'p']);
    const env = { TOKENS_PER_USER_MAX: '2' };
    for (let i = 0; i < 2; i++)
      assert.equal((await h.cli(['token', 'create', '--user', 'capped', '--private'], { env })).code, 0);
    const refused = await h.cli(['token', 'create', '--user', 'capped'], { env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /already holds 2 live API tokens \(TOKENS_PER_USER_MAX\).*--force/);
    assert.equal(refused.stdout, '');
    const forced = await h.cli(['token', 'create', '--user', 'capped', '--force', '--json'], { env });
    assert.equal(forced.code, 0, forced.stderr);
    const listed = await h.json(['token', 'list', '--user', 'capped']);
    assert.equal((listed.tokens as unknown[]).length, 3);
  });

  it('create refuses a description longer than the API allows', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'e', '--password', 'p']);
    const r = await h.cli(['token', 'create', '--user', 'e', '--description', 'x'.repeat(5000)]);
    assert.equal(r.code, 2, 'a usage mistake');
    assert.match(r.stderr, /--description: the description is too long \(longer than \d+ characters\)/);
    assert.deepEqual((await h.json(['token', 'list', '--user', 'e'])).tokens, []);
  });

  it("create refuses a description with a control character (the API's rule); a tab is kept", async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'f', '--password', 'p']);
    for (const [description, code] of [
      ['a\nb', 'U+000A'],
      ['a\u001bb', 'U+001B'],
      ['a\u009bb', 'U+009B'],
    ]) {
      const r = await h.cli(['token', 'create', '--user', 'f', '--description', description as string]);
      assert.equal(r.code, 2, 'a usage mistake');
      assert.ok(
        r.stderr.includes(
          `--description: the description may not contain control characters (it has ${code})`,
        ),
        r.stderr,
      );
    }
    assert.deepEqual((await h.json(['token', 'list', '--user', 'f'])).tokens, []);
    const tabbed = await h.json(['token', 'create', '--user', 'f', '--description', 'a\tb']);
    assert.equal(tabbed.description, 'a\tb');
  });
});

for (const dialect of DIALECTS) {
  describe(`tokend on ${dialect}`, () => {
    it('user create (explicit and next id), token create/list/revoke, ban', async (t) => {
      const h = await cliHarness(t, dialect);
      if (dialect === 'ripple') {
        // In place tokend makes no users (the family's website signs them up): the CLI refuses, and the
        // users below are the website's.
        const refused = await h.cli(['user', 'create', '--username', 'x1', '--password', 'p']);
        assert.equal(refused.code, 1, refused.stdout);
        assert.match(refused.stderr, /not done on a Ripple-family database \(DATABASE_SCHEMA=ripple\)/);
      }
      const first = { id: await h.createUser({ username: 'x1', password: 'p', id: 500 }) };
      const next = { id: await h.createUser({ username: 'x2', password: 'p' }) };
      assert.equal(first.id, 500);
      assert.equal(next.id, 501);
      const token = await h.json(['token', 'create', '--user', '501', '--privileges', '4']);
      assert.equal((await get(h, '/tokens/self', token.token as string)).body.privileges, 4);
      await h.json(['user', 'ban', '--user', 'x2']);
      assert.equal((await get(h, '/ping', token.token as string)).body.privileges, 0);
      const listed = await h.json(['token', 'list', '--user', 'x2']);
      assert.equal((listed.tokens as unknown[]).length, 1);
      await h.json(['token', 'revoke', '--id', String(token.id)]);
      assert.equal((await get(h, '/tokens/self', token.token as string)).status, 404);
    });
  });
}
