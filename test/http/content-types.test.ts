// Any Content-Type with an empty body counts as no body; any other body is read as JSON whatever its
// Content-Type says (as the Ripple family's API does): what is not JSON is the 400 bad-JSON envelope,
// never a 415.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';

const dialect = DIALECTS[0] ?? 'sqlite';

describe('content types on the v1 API', () => {
  it('deletes the current token when curl -d "" labels the empty body as a form', async (t) => {
    const h = await build(t, dialect);
    const user = await h.createUser();
    const { secret } = await h.createToken(user.id);
    const headers = { 'x-ripple-token': secret, 'content-type': 'application/x-www-form-urlencoded' };
    const deleted = await h.api({ method: 'POST', path: '/tokens/self/delete', headers, payload: '' });
    assert.equal(deleted.statusCode, 200, deleted.body);
    const after = await h.api({ method: 'GET', path: '/tokens/self', headers: { 'x-ripple-token': secret } });
    assert.equal(after.statusCode, 404);
  });

  for (const [type, payload] of [
    ['application/x-www-form-urlencoded', 'username=a&password=b'],
    ['application/xml', '<login/>'],
    ['multipart/form-data; boundary=x', '--x--'],
  ] as const) {
    it(`answers a ${type} body that is not JSON with the 400 bad-JSON envelope`, async (t) => {
      const h = await build(t, dialect);
      const r = await h.api({ method: 'POST', path: '/tokens', headers: { 'content-type': type }, payload });
      assert.equal(r.statusCode, 400);
      assert.equal(body(r).code, 400);
      assert.match(String(body(r).message), /bad json/i);
    });
  }

  it('reads a JSON body labelled text/plain as JSON', async (t) => {
    const h = await build(t, dialect);
    const payload = '{"username":"a","password":"b"}';
    const r = await h.api({
      method: 'POST',
      path: '/tokens',
      headers: { 'content-type': 'text/plain' },
      payload,
    });
    // no user "a": the fields were read
    assert.equal(r.statusCode, 404);
    assert.equal(body(r).code, 404);
  });
});
