// Route schemas compiled on first use (src/http/schema-compilers.ts): nothing is compiled before a request
// needs it, each schema once (once per process, whatever the number of apps built in it), and the lazy validator answers as the compiled one, with the two properties
// Fastify reads (`errors`, `schemaEnv`). The routes' own behaviour under it is every API test's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { lazySchemaController, lazySerializer, lazyValidator } from '../../src/http/schema-compilers.ts';

describe('lazyValidator()', () => {
  it('compiles on first use, once, and forwards the call, errors and schemaEnv', () => {
    let compiles = 0;
    const env = { marker: true };
    const compiled = Object.assign(
      function (this: unknown, data: unknown, ctx?: unknown) {
        compiled.errors = data === 1 ? null : [{ message: `bad ${String(data)}`, ctx }];
        return data === 1;
      },
      { errors: null as unknown, schemaEnv: env },
    );
    const validate = lazyValidator(() => {
      compiles++;
      return compiled;
    });
    assert.equal(compiles, 0, 'made, not compiled');
    assert.equal(validate.schemaEnv, env);
    assert.equal(compiles, 1);
    assert.equal(validate(1), true);
    assert.equal(validate.errors, null);
    assert.equal(validate(2, { parentData: 'p' }), false);
    assert.deepEqual(validate.errors, [{ message: 'bad 2', ctx: { parentData: 'p' } }]);
    assert.equal(compiles, 1, 'compiled once');
  });

  it('lets a compile error surface on the first use, not before', () => {
    const validate = lazyValidator(() => {
      throw new Error('schema is invalid');
    });
    assert.throws(() => validate({}), /schema is invalid/);
  });
});

describe('lazySerializer()', () => {
  it('compiles on first use, once', () => {
    let compiles = 0;
    const serialize = lazySerializer(() => {
      compiles++;
      return (data) => `<${JSON.stringify(data)}>`;
    });
    assert.equal(compiles, 0);
    assert.equal(serialize({ a: 1 }), '<{"a":1}>');
    assert.equal(serialize(2), '<2>');
    assert.equal(compiles, 1);
  });
});

/** A route's schema: a body with one integer, and an answer that names only it. */
const schema = {
  body: {
    type: 'object',
    required: ['n'],
    properties: { n: { type: 'integer' } },
    additionalProperties: false,
  },
  response: {
    200: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
  },
} as const;

describe('lazySchemaController in a Fastify app', () => {
  async function app() {
    const app = Fastify({
      schemaController: lazySchemaController,
      ajv: { customOptions: { coerceTypes: false, allErrors: false } },
    });
    // The response schema drops `extra`: proof that the serializer compiled from the route's schema ran.
    app.post('/n', { schema }, async (request) => ({ ...(request.body as object), extra: 'x' }));
    await app.ready();
    return app;
  }

  it('validates with the route schema and the server Ajv options, and serializes with its response schema', async () => {
    const a = await app();
    try {
      const ok = await a.inject({ method: 'POST', url: '/n', payload: { n: 5 } });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.body, '{"n":5}');
      // coerceTypes: false, as the server's `ajv` option says: a string is no integer.
      const coerced = await a.inject({ method: 'POST', url: '/n', payload: { n: '5' } });
      assert.equal(coerced.statusCode, 400);
      assert.match(coerced.json().message, /body\/n must be integer/);
      const missing = await a.inject({ method: 'POST', url: '/n', payload: {} });
      assert.equal(missing.statusCode, 400);
      assert.match(missing.json().message, /must have required property 'n'/);
    } finally {
      await a.close();
    }
  });
});

describe('schemas compiled once per process', () => {
  it('two apps with the same route schema: each validates and serializes its own requests, errors apart', async () => {
    const apps = [0, 1].map(() => {
      const app = Fastify({ schemaController: lazySchemaController });
      app.post('/', { schema }, async (request) => ({
        n: (request.body as { n: number }).n,
        extra: 'dropped',
      }));
      return app;
    });
    const post = (i: number, payload: unknown) =>
      apps[i]!.inject({ method: 'POST', url: '/', payload: payload as object });
    // One app refuses while the other accepts, in either order: neither sees the other's errors.
    const [bad, good] = await Promise.all([post(0, { n: 'x' }), post(1, { n: 2 })]);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /body\/n must be integer/);
    assert.equal(good.statusCode, 200);
    assert.deepEqual(good.json(), { n: 2 }, 'the response schema serializes, dropping what it does not name');
    const [good0, bad1] = await Promise.all([post(0, { n: 3 }), post(1, {})]);
    assert.deepEqual(good0.json(), { n: 3 });
    assert.equal(bad1.statusCode, 400);
    assert.match(bad1.json().message, /must have required property 'n'/);
    await Promise.all(apps.map((app) => app.close()));
  });
});
