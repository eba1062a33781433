// Security headers on every answer. They depend only on the options, never on the request, so helmet's
// middleware is built once here; @fastify/helmet rebuilds it for every request, which the profile of
// GET /v1/tokens/self showed costing more CPU than everything else tokend does (see bench/README.md).
import { createRequire } from 'node:module';
import fp from 'fastify-plugin';
import type helmetType from 'helmet';
import type { HelmetOptions } from 'helmet';

// helmet itself: the dependency @fastify/helmet wraps.
const helmet = createRequire(import.meta.resolve('@fastify/helmet'))('helmet') as typeof helmetType;

export const securityHeaders = fp<HelmetOptions>(
  async (app, options) => {
    const apply = helmet(options);
    app.addHook('onRequest', (request, reply, done) =>
      apply(request.raw, reply.raw, (err?: unknown) => done(err instanceof Error ? err : undefined)),
    );
  },
  { name: 'tokend-security-headers' },
);
