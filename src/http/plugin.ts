// Adds request.identity, resolved before the handler on routes whose config says `identify: true`.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { NO_IDENTITY, makeIdentify, type Identity, type IdentityDeps } from './identity.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Resolve the request's credential into request.identity before the handler runs. */
    identify?: boolean;
  }
  interface FastifyRequest {
    identity: Identity | null;
  }
}

export const identityOf = (request: FastifyRequest): Identity => request.identity ?? NO_IDENTITY;

export const identityPlugin = fp<IdentityDeps>(
  async (app, deps) => {
    const identify = makeIdentify(deps);
    app.decorateRequest('identity', null);
    // A callback hook: a route that does not identify, or a lookup that answers at once (SQLite), goes
    // on without a promise or a microtask.
    app.addHook('preHandler', (request, _reply, done) => {
      if (!request.routeOptions.config.identify) return done();
      let identity: Identity | Promise<Identity>;
      try {
        identity = identify(request);
      } catch (err) {
        return done(err as Error);
      }
      if (!(identity instanceof Promise)) {
        request.identity = identity;
        return done();
      }
      identity.then(
        (resolved) => {
          request.identity = resolved;
          done();
        },
        (err: unknown) => done(err as Error),
      );
    });
  },
  { name: 'tokend-identity', dependencies: ['@fastify/cookie'] },
);
