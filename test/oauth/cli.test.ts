// tokend client …: registering clients and minting bearer tokens from the command line, checked over HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliHarness } from '../helpers/cli.ts';

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
      [['client', 'create', '--name', 'X', '--redirect-uri', 'not a uri'], /not an absolute URI/, 2],
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
