// tokend audit as an operator runs it: filters, JSON lines, and its usage errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { cliHarness, jsonError } from '../helpers/cli.ts';

for (const dialect of DIALECTS) {
  describe(`tokend audit (${dialect})`, () => {
    it('prints the events of the operator commands, filtered, as a table or JSON lines', async (t) => {
      const h = await cliHarness(t, dialect);
      await h.createUser({ username: 'carol', password: 'carol-password' });
      const token = await h.json(['token', 'create', '--user', 'carol', '--description', 'audited']);
      await h.json(['token', 'revoke', '--id', String(token.id)]);
      await h.json(['user', 'ban', '--user', 'carol']);
      const client = await h.json([
        'client',
        'create',
        '--name',
        'Doomed App',
        '--redirect-uri',
        'https://app.example/cb',
        '--owner',
        'carol',
      ]);
      const rotated = await h.json(['client', 'rotate', '--client', String(client.id), '--end-tokens']);
      await h.json(['client', 'delete', '--client', String(client.id)]);

      const all = await h.cli(['audit', '--json']);
      assert.equal(all.code, 0, all.stderr);
      const events = all.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        events.map((e) => [e.kind, e.means, e.token_id]),
        [
          ['app.deleted', 'cli', null],
          ['app.secret_rotated', 'cli', null],
          ['app.registered', 'cli', null],
          ['privileges.changed', 'cli', null],
          ['token.revoked', 'cli', token.id],
          ['token.created', 'cli', token.id],
        ],
      );
      for (const e of events.slice(0, 3)) assert.equal(e.client_id, client.id);
      assert.equal(events[1]!.detail, 'tokens ended');
      assert.equal(events[4]!.detail, 'operator');
      assert.ok(!all.stdout.includes(String(client.secret)), 'never the client secret');
      assert.ok(!all.stdout.includes(String(rotated.secret)), 'never the new client secret');
      assert.ok(!all.stdout.includes(String(token.token)), 'never the secret');

      const revoked = await h.cli(['audit', '--user', 'carol', '--kind', 'token.revoked', '--json']);
      assert.equal(revoked.stdout.trim().split('\n').length, 1);
      const later = await h.cli(['audit', '--since', String(Math.floor(Date.now() / 1000) + 3600), '--json']);
      assert.equal(later.code, 0);
      assert.equal(later.stdout, '');
      const text = await h.cli(['audit', '--user', 'carol']);
      assert.match(text.stdout, /^TIME \(UTC\)\s+USER\s+KIND/);
      assert.match(text.stdout, /token\.revoked\s+cli\s+\d+\s+operator/);
      const none = await h.cli(['audit', '--kind', 'signin.failed']);
      assert.equal(none.stdout.trim(), 'No events.');
    });

    it('refuses an unknown kind, a bad time and an unknown user, as other commands do', async (t) => {
      const h = await cliHarness(t, dialect);
      const kind = await h.cli(['audit', '--kind', 'token.stolen', '--json']);
      assert.equal(kind.code, 2);
      assert.match(jsonError(kind).error, /no event kind "token\.stolen"; the kinds are signin\.succeeded/);
      const since = await h.cli(['audit', '--since', 'last tuesday', '--json']);
      assert.equal(since.code, 2);
      assert.match(jsonError(since).error, /--since: expected an ISO date/);
      const user = await h.cli(['audit', '--user', 'nobody', '--json']);
      assert.equal(user.code, 1);
      assert.match(jsonError(user).error, /no user with id or username "nobody"/);
    });
  });
}
