// tokend client …: registering clients and minting bearer tokens from the command line, checked over HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliHarness, type CliHarness } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/dialects.ts';

describe('tokend client', { concurrency: 4 }, () => {
  it('create prints the id and the secret once; the secret authenticates the client', async (t) => {
    const h = await cliHarness(t);
    const owner = await h.json(['user', 'create', '--username', 'dev', '--password', 'p']);
    await h.json(['user', 'create', '--username', 'player', '--password', 'p']);
    const created = await h.json([
      'client',
      'create',
      '--name',
      'Score Tracker',
      '--redirect-uri',
      'https://tracker.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:7000/cb',
      '--owner',
      'dev',
      '--avatar',
      'https://tracker.example/icon.png',
    ]);
    assert.match(created.id as string, /^[0-9a-f]{24}$/);
    assert.match(created.secret as string, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(created.name, 'Score Tracker');
    assert.equal(created.owner_id, owner.id);
    assert.equal(created.avatar, 'https://tracker.example/icon.png');
    assert.deepEqual(created.redirect_uris, ['https://tracker.example/cb', 'http://127.0.0.1:7000/cb']);
    assert.equal(created.public, false);

    const listed = await h.json(['client', 'list']);
    const clients = listed.clients as Array<Record<string, unknown>>;
    assert.equal(clients.length, 1);
    assert.equal(clients[0]?.id, created.id);
    assert.equal(JSON.stringify(listed).includes(created.secret as string), false);

    const minted = await h.json([
      'client',
      'token',
      '--client',
      created.id as string,
      '--user',
      'player',
      '--scope',
      'write read_confidential',
    ]);
    assert.equal(minted.token_type, 'Bearer');
    assert.equal(minted.scope, 'read_confidential write');
    const app = await h.app();
    const self = await app.inject({
      method: 'GET',
      url: '/api/v1/tokens/self',
      headers: { authorization: `Bearer ${minted.access_token}` },
    });
    assert.equal(self.statusCode, 200, self.body);
    const info = self.json() as Record<string, unknown>;
    assert.equal(info.privileges, 6);
    assert.deepEqual(info.client, {
      id: created.id,
      name: 'Score Tracker',
      owner_id: owner.id,
      avatar: 'https://tracker.example/icon.png',
    });

    // The printed secret is the client's: introspection accepts it, and a wrong one is refused.
    const introspect = (secret: string) =>
      app.inject({
        method: 'POST',
        url: '/oauth/introspect',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${created.id}:${secret}`).toString('base64')}`,
        },
        payload: `token=${minted.access_token}`,
      });
    assert.equal((await introspect(created.secret as string)).json().active, true);
    assert.equal((await introspect('wrong')).statusCode, 401);

    const deleted = await h.json(['client', 'delete', '--id', created.id as string]);
    assert.deepEqual(deleted, { id: created.id, deleted: true });
    const after = await app.inject({
      method: 'GET',
      url: '/api/v1/tokens/self',
      headers: { authorization: `Bearer ${minted.access_token}` },
    });
    assert.equal(after.statusCode, 404);
    assert.deepEqual((await h.json(['client', 'list'])).clients, []);
  });

  it('registers a public client without a secret', async (t) => {
    const h = await cliHarness(t);
    await h.json(['user', 'create', '--username', 'dev', '--password', 'p']);
    const created = await h.json([
      'client',
      'create',
      '--name',
      'Native',
      '--redirect-uri',
      'com.example.app:/cb',
      '--public',
    ]);
    assert.equal(created.secret, null);
    assert.equal(created.public, true);
  });

  it('refuses bad input with a message: exit code 2 for a bad value, 1 for what is not there', async (t) => {
    const h = await cliHarness(t);
    const none = await h.cli(['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no users exist yet/);
    await h.json(['user', 'create', '--username', 'dev', '--password', 'p']);
    const cases: Array<[string[], RegExp, number]> = [
      [['client', 'create', '--name', 'X', '--redirect-uri', 'not-a-uri'], /not an absolute URI/, 2],
      [
        ['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/c b'],
        /percent-encode it/,
        2,
      ],
      [
        ['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb\u001b]0;t\u0007'],
        /percent-encode/,
        2,
      ],
      [['client', 'create', '--name', 'Evil\u202egnp.exe', '--redirect-uri', 'https://x/cb'], /invisible/, 2],
      [['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb#frag'], /fragment/, 2],
      [['client', 'create', '--name', 'X', '--redirect-uri', 'javascript:alert(1)'], /not allowed/, 2],
      [
        ['client', 'create', '--name', 'X', '--redirect-uri', 'https://x/cb', '--avatar', 'ftp://x/a.png'],
        /avatar/,
        2,
      ],
      [
        ['client', 'create', '--name', 'X', '--redirect-uri', 'https://x/cb', '--owner', 'ghost'],
        /no user/,
        1,
      ],
      [['client', 'delete', '--id', 'nope'], /no client/, 1],
      [['client', 'token', '--client', 'nope', '--user', 'dev', '--scope', 'write'], /no client/, 1],
      [
        ['client', 'token', '--client', 'nope', '--user', 'dev', '--scope', 'admin'],
        /Unknown scope "admin"/,
        2,
      ],
    ];
    for (const [args, message, code] of cases) {
      const r = await h.cli(args);
      assert.equal(r.code, code, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
      assert.equal(r.stdout, '');
    }
  });
});

/** Introspects `token` as the client `id` with `secret`: its HTTP status and whether the token is active. */
async function introspectAs(h: CliHarness, id: string, secret: string, token: string) {
  const app = await h.app();
  const r = await app.inject({
    method: 'POST',
    url: '/oauth/introspect',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
    },
    payload: `token=${encodeURIComponent(token)}`,
  });
  return { status: r.statusCode, active: r.statusCode === 200 && (r.json() as { active: boolean }).active };
}

const createArgs = (name: string, owner: string, ...more: string[]) => [
  'client',
  'create',
  '--name',
  name,
  '--redirect-uri',
  'https://tracker.example/cb',
  '--owner',
  owner,
  ...more,
];

for (const dialect of DIALECTS) {
  describe(`tokend client for an owner's applications [${dialect}]`, { concurrency: 2 }, () => {
    it("list --owner shows one owner's clients with how many users authorized each", async (t) => {
      const h = await cliHarness(t, dialect);
      const dev = { id: await h.createUser({ username: 'dev', password: 'p' }) };
      await h.createUser({ username: 'other', password: 'p' });
      const player = { id: await h.createUser({ username: 'player', password: 'p' }) };
      const first = await h.json(createArgs('First', 'dev'));
      await h.json(createArgs('Second', 'dev', '--public'));
      await h.json(createArgs('Not theirs', 'other'));
      const app = await h.app();
      await app.tokend.store.db
        .insertInto('oauth_consents')
        .values({ user_id: player.id as number, client_id: first.id as string, scope: '', updated_at: 1 })
        .execute();

      const listed = (await h.json(['client', 'list', '--owner', 'dev'])).clients as Array<
        Record<string, unknown>
      >;
      assert.deepEqual(
        listed.map((c) => [c.name, c.owner_id, c.public, c.authorized_users]),
        [
          ['First', dev.id, false, 1],
          ['Second', dev.id, true, 0],
        ],
      );
      const text = await h.cli(['client', 'list', '--owner', String(dev.id)]);
      assert.equal(text.code, 0);
      assert.match(text.stdout, /USERS/);
      assert.match(text.stdout, /First/);
      assert.doesNotMatch(text.stdout, /Not theirs/);
      const none = await h.cli(['client', 'list', '--owner', 'player']);
      assert.match(none.stdout, /has no clients/);
      const ghost = await h.cli(['client', 'list', '--owner', 'ghost']);
      assert.equal(ghost.code, 1);
      assert.match(ghost.stderr, /no user/);
    });

    it('rotate prints a new secret once: the old one stops at once; --end-tokens ends the tokens too', async (t) => {
      const h = await cliHarness(t, dialect);
      await h.createUser({ username: 'dev', password: 'p' });
      await h.createUser({ username: 'player', password: 'p' });
      const created = await h.json(createArgs('Tracker', 'dev'));
      const id = created.id as string;
      const minted = await h.json(['client', 'token', '--client', id, '--user', 'player']);
      const token = minted.access_token as string;

      const rotated = await h.json(['client', 'rotate', '--client', id]);
      assert.equal(rotated.id, id);
      assert.match(rotated.secret as string, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(rotated.ended_tokens, 0);
      assert.equal((await introspectAs(h, id, created.secret as string, token)).status, 401);
      assert.deepEqual(await introspectAs(h, id, rotated.secret as string, token), {
        status: 200,
        active: true,
      });
      assert.equal(
        JSON.stringify(await h.json(['client', 'list'])).includes(rotated.secret as string),
        false,
      );

      const text = await h.cli(['client', 'rotate', '--client', id, '--end-tokens']);
      assert.equal(text.code, 0, text.stderr);
      const secret = /Secret \(shown only once\): (\S+)/.exec(text.stdout)?.[1];
      assert.ok(secret);
      assert.match(text.stdout, /Ended 1 tokens and codes/);
      assert.deepEqual(await introspectAs(h, id, secret, token), { status: 200, active: false });
      assert.equal((await introspectAs(h, id, rotated.secret as string, token)).status, 401);
    });

    it('refuses to rotate a public or unknown client, and a name the owner already uses', async (t) => {
      const h = await cliHarness(t, dialect);
      await h.createUser({ username: 'dev', password: 'p' });
      await h.createUser({ username: 'other', password: 'p' });
      const publicClient = await h.json(createArgs('Native', 'dev', '--public'));
      const cases: Array<[string[], RegExp, number]> = [
        [['client', 'rotate', '--client', publicClient.id as string], /public: it has no secret/, 1],
        [['client', 'rotate', '--client', 'nope'], /no client with id "nope"/, 1],
        [['client', 'rotate'], /missing option --client/, 2],
        [createArgs('NATIVE', 'dev'), /already have an application named/, 1],
      ];
      for (const [args, message, code] of cases) {
        const r = await h.cli(args);
        assert.equal(r.code, code, args.join(' '));
        assert.match(r.stderr, message, args.join(' '));
        assert.equal(r.stdout, '');
      }
      // Another owner may use the name.
      await h.json(createArgs('Native', 'other'));
    });

    it('delete ends every token and approval of the client', async (t) => {
      const h = await cliHarness(t, dialect);
      await h.createUser({ username: 'dev', password: 'p' });
      const player = { id: await h.createUser({ username: 'player', password: 'p' }) };
      const created = await h.json(createArgs('Tracker', 'dev'));
      const id = created.id as string;
      await h.json(['client', 'token', '--client', id, '--user', 'player']);
      const app = await h.app();
      const db = app.tokend.store.db;
      await db
        .insertInto('oauth_consents')
        .values({ user_id: player.id as number, client_id: id, scope: '', updated_at: 1 })
        .execute();
      assert.deepEqual(await h.json(['client', 'delete', '--client', id]), { id, deleted: true });
      for (const table of ['oauth_consents', 'oauth_access_tokens', 'oauth_clients'] as const) {
        const column = table === 'oauth_clients' ? 'id' : 'client_id';
        const left = await db.selectFrom(table).select(column).where(column, '=', id).execute();
        assert.equal(left.length, 0, table);
      }
    });
  });
}
