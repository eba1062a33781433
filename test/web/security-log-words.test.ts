// The security log page in words a person reads: a token by its description while it exists, how a
// revocation came about instead of a code word; on every backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { csrfOf, signedInUser } from '../helpers/inject-browser.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';

for (const dialect of DIALECTS)
  describe(`the security log page's words [${dialect}]`, () => {
    it('names a token by its description, and says how a revocation came about', async (t) => {
      const h = await build(t, dialect);
      const { user, browser } = await signedInUser(h);
      const kept = await h.createToken(user.id, {
        description: 'score uploader',
        privileges: TokenPrivilege.ReadConfidential,
      });
      const gone = await h.createToken(user.id, { description: 'old bot' });
      const edit = await browser.get(`/tokens/${kept.id}/edit`);
      const edited = await browser.post(`/tokens/${kept.id}/edit`, {
        _csrf: csrfOf(edit.body),
        description: 'stats reader',
        privileges: 'ReadConfidential',
      });
      assert.equal(edited.statusCode, 303, edited.body);
      const confirm = await browser.get(`/tokens/${gone.id}/revoke`);
      assert.equal(
        (await browser.post(`/tokens/${gone.id}/revoke`, { _csrf: csrfOf(confirm.body) })).statusCode,
        303,
      );

      const page = (await browser.get('/security-log')).body;
      assert.match(page, new RegExp(`token ${kept.id} “stats reader” · description`));
      assert.match(page, new RegExp(`token ${gone.id} · revoked on the token page`));
      assert.doesNotMatch(page, / · page</);
    });
  });
