import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from './helpers/dialects.ts';
import { build, body } from './helpers/app.ts';

for (const dialect of DIALECTS) {
  describe(`smoke [${dialect}]`, () => {
    it('creates a token and reads it back', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const created = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { id: user.id, password: user.password },
      });
      assert.equal(created.statusCode, 200, created.body);
      const secret = body(created).token as string;
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': secret },
      });
      assert.equal(self.statusCode, 200, self.body);
      assert.equal(body(self).privileges, 0);
    });
  });
}
