// Security headers on every answer. They depend only on the options, never on the request, so helmet's
// middleware is built once here (the @fastify/helmet wrapper rebuilt it for every request, which took
// about 40 % of the CPU of GET /v1/tokens/self: see the tuning log in bench/README.md).
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

export const securityHeaders = fp<HelmetOptions>(
  async (app, options) => {
    const apply = helmet(options);
    app.addHook('onRequest', (request, reply, done) =>
      apply(request.raw, reply.raw, (err?: unknown) => done(err instanceof Error ? err : undefined)),
    );
  },
  { name: 'tokend-security-headers' },
);
