// Every route's schemas compile. tokend compiles a route's schemas on the route's first request
// (src/http/schema-compilers.ts), so a schema Ajv or fast-json-stringify refuses would no longer stop the
// app from starting: this test compiles each one the app registers, as its first request would.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteOptions } from 'fastify';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { build } from '../helpers/app.ts';
import { AJV_OPTIONS, lazySchemaController } from '../../src/http/schema-compilers.ts';

const PARTS = ['body', 'querystring', 'params', 'headers'] as const;

describe('route schemas', () => {
  it('every validator and response serializer of every route compiles', async (t) => {
    const routes: RouteOptions[] = [];
    await build(t, 'sqlite', {}, { onRoute: (route) => void routes.push(route) });
    const validatorOf = lazySchemaController.compilersFactory!.buildValidator!({}, AJV_OPTIONS);
    const serializerOf = SerializerSelector()({}, {});
    let validators = 0;
    let serializers = 0;
    for (const route of routes) {
      const schema = route.schema as Record<string, unknown> | undefined;
      if (!schema) continue;
      const method = [route.method].flat().join(',');
      const where = `${method} ${route.url}`;
      for (const httpPart of PARTS) {
        if (schema[httpPart] === undefined) continue;
        const validate = validatorOf({
          schema: schema[httpPart],
          method,
          url: route.url,
          httpPart,
        } as never) as { schemaEnv?: unknown };
        // Reading what Fastify reads before a call compiles the schema; Ajv throws on one it refuses.
        assert.doesNotThrow(() => validate.schemaEnv, `${where} ${httpPart}`);
        assert.equal(typeof validate.schemaEnv, 'object', `${where} ${httpPart}: compiled by Ajv`);
        validators++;
      }
      const responses = (schema.response ?? {}) as Record<string, unknown>;
      for (const [httpStatus, responseSchema] of Object.entries(responses)) {
        assert.doesNotThrow(
          () => serializerOf({ schema: responseSchema, method, url: route.url, httpStatus } as never),
          `${where} response ${httpStatus}`,
        );
        serializers++;
      }
    }
    // The token API's bodies and ids, and a response schema on each API route (and its HEAD twin).
    assert.ok(validators >= 5, `${validators} validators`);
    assert.ok(serializers >= 20, `${serializers} serializers`);
  });
});
