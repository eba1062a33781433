// Garbage bodies on token creation: every one gets a 4xx envelope whose code equals the HTTP status.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';

interface Garbage {
  name: string;
  payload: string | Buffer;
  contentType?: string;
  /** The exact status, when the decisions fix one. */
  status?: number;
}

const json = (v: unknown) => JSON.stringify(v);

const GARBAGE: Garbage[] = [
  // wrong JSON types, field by field
  { name: 'username as number', payload: json({ username: 5, password: 'pw' }), status: 400 },
  { name: 'username as array', payload: json({ username: ['a'], password: 'pw' }), status: 400 },
  { name: 'username as object', payload: json({ username: { a: 1 }, password: 'pw' }), status: 400 },
  { name: 'username as boolean', payload: json({ username: true, password: 'pw' }), status: 400 },
  { name: 'id as string', payload: json({ id: '5', password: 'pw' }), status: 400 },
  { name: 'id as float', payload: json({ id: 1.5, password: 'pw' }), status: 400 },
  { name: 'id as boolean', payload: json({ id: true, password: 'pw' }), status: 400 },
  { name: 'id as object', payload: json({ id: {}, password: 'pw' }), status: 400 },
  { name: 'id as array', payload: json({ id: [1], password: 'pw' }), status: 400 },
  { name: 'password as number', payload: json({ id: 1, password: 1234 }), status: 400 },
  { name: 'password as array', payload: json({ id: 1, password: ['pw'] }), status: 400 },
  { name: 'password as object', payload: json({ id: 1, password: { pw: 1 } }), status: 400 },
  { name: 'privileges as string', payload: json({ id: 1, password: 'pw', privileges: '3' }), status: 400 },
  { name: 'privileges as float', payload: json({ id: 1, password: 'pw', privileges: 2.5 }), status: 400 },
  { name: 'privileges negative', payload: json({ id: 1, password: 'pw', privileges: -1 }), status: 400 },
  { name: 'privileges as boolean', payload: json({ id: 1, password: 'pw', privileges: true }), status: 400 },
  { name: 'description as number', payload: json({ id: 1, password: 'pw', description: 7 }), status: 400 },
  { name: 'description as object', payload: json({ id: 1, password: 'pw', description: {} }), status: 400 },
  // bodies that are not objects
  { name: 'null', payload: 'null', status: 400 },
  { name: 'empty array', payload: '[]', status: 400 },
  { name: 'array of objects', payload: json([{ id: 1, password: 'pw' }]), status: 400 },
  { name: 'number', payload: '42', status: 400 },
  { name: 'string', payload: '"id=1&password=pw"', status: 400 },
  { name: 'boolean', payload: 'true', status: 400 },
  // huge numbers
  { name: 'id 1e400', payload: '{"id": 1e400, "password": "pw"}' },
  { name: 'id 2^64', payload: '{"id": 18446744073709551616, "password": "pw"}' },
  { name: 'id -2^64', payload: '{"id": -18446744073709551616, "password": "pw"}' },
  { name: 'privileges 1e400', payload: '{"id": 1, "password": "pw", "privileges": 1e400}', status: 400 },
  {
    name: 'privileges 2^64',
    payload: '{"id": 1, "password": "pw", "privileges": 18446744073709551616}',
    status: 400,
  },
  { name: 'id with 400 digits', payload: `{"id": ${'9'.repeat(400)}, "password": "pw"}` },
  // prototype pollution
  { name: '__proto__ key', payload: '{"__proto__": {"id": 1}, "password": "pw"}', status: 400 },
  {
    name: 'nested __proto__ key',
    payload: '{"id": 1, "password": "pw", "description": {"__proto__": {}}}',
    status: 400,
  },
  {
    name: 'constructor.prototype',
    payload: '{"constructor": {"prototype": {"id": 1}}, "password": "pw"}',
    status: 400,
  },
  // broken JSON and encodings
  { name: 'truncated JSON', payload: '{"id": 1, "password": "pw"', status: 400 },
  { name: 'trailing garbage', payload: '{"id": 1, "password": "pw"} x', status: 400 },
  { name: 'single quotes', payload: "{'id': 1, 'password': 'pw'}", status: 400 },
  { name: 'NaN', payload: '{"id": NaN, "password": "pw"}', status: 400 },
  { name: 'empty body', payload: '', status: 400 },
  { name: 'whitespace body', payload: '   \n ', status: 400 },
  {
    name: 'invalid UTF-8',
    payload: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0xff, 0xfe, 0x7d]),
    status: 400,
  },
  {
    name: 'Latin-1 username',
    payload: Buffer.from('{"username":"J\u00fcrgen","password":"pw"}', 'latin1'),
    status: 400,
  },
  {
    name: 'invalid UTF-8 inside a string',
    payload: Buffer.concat([
      Buffer.from('{"username":"'),
      Buffer.from([0xc3, 0x28, 0xa0, 0xa1]),
      Buffer.from('","password":"pw"}'),
    ]),
    status: 400,
  },
  // content types: every body is read as JSON whatever its label (a JSON one is read: test/compat)
  { name: 'text/plain', payload: 'id=1&password=pw', contentType: 'text/plain', status: 400 },
  { name: 'application/xml', payload: '<id>1</id>', contentType: 'application/xml', status: 400 },
  {
    name: 'multipart',
    payload: '--x\r\n\r\n--x--',
    contentType: 'multipart/form-data; boundary=x',
    status: 400,
  },
  {
    name: 'description with NUL',
    payload: json({ id: 1, password: 'pw', description: 'a\u0000b' }),
    status: 400,
  },
  // limits
  {
    name: 'description over 1024 characters',
    payload: json({ id: 1, password: 'pw', description: 'd'.repeat(5000) }),
    status: 400,
  },
  { name: '3 MB body', payload: json({ id: 1, password: 'p'.repeat(3 * 1024 * 1024) }), status: 413 },
];

for (const dialect of DIALECTS) {
  describe(`garbage bodies on token creation [${dialect}]`, () => {
    it('every garbage body gets a 4xx envelope with code = status and a message', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser({ id: 1, username: 'victim' });
      for (const path of ['/tokens', '/tokens/new', '/token/new']) {
        for (const g of GARBAGE) {
          const r = await h.api({
            method: 'POST',
            path,
            headers: { 'content-type': g.contentType ?? 'application/json' },
            payload: g.payload,
          });
          const label = `${path} ${g.name}: ${r.statusCode} ${r.body.slice(0, 200)}`;
          assert.ok(r.statusCode >= 400 && r.statusCode < 500, label);
          if (g.status !== undefined) assert.equal(r.statusCode, g.status, label);
          assert.match(r.headers['content-type'] ?? '', /application\/json/, label);
          const b = r.json() as Record<string, unknown>;
          assert.equal(b.code, r.statusCode, label);
          assert.equal(typeof b.message, 'string', label);
          assert.notEqual(String(b.message).trim(), '', label);
          assert.equal(b.token, undefined, label);
        }
      }
      // no garbage created a token, and the victim's quota was not spent by parse errors
      const count = await h.store.db
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 0);
      assert.equal(({} as Record<string, unknown>).id, undefined, 'Object.prototype was not polluted');
      const ok = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { id: user.id, password: user.password },
      });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('a 3 MB body is refused with 413 on every route, also with a credential', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const token = await h.createToken(user.id);
      const big = json({ description: 'x'.repeat(3 * 1024 * 1024) });
      for (const path of ['/tokens/self/delete', '/tokens/fix_privileges', '/tokens']) {
        const r = await h.api({
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', 'x-ripple-token': token.secret },
          payload: big,
        });
        assert.equal(r.statusCode, 413, `${path}: ${r.body}`);
        assert.equal((r.json() as { code: number }).code, 413);
      }
      // the token survived: the delete never ran
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': token.secret },
      });
      assert.equal(self.statusCode, 200);
    });
  });
}
