// Adds request.identity, resolved before the handler on routes whose config says `identify: true`.
import fp from 'fastify-plugin';
import type { FastifyRequest, preHandlerHookHandler } from 'fastify';
import { addRouteHook } from './route-hooks.ts';
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
    // A callback hook: a request without a credential goes on without a promise or a microtask.
    const resolveIdentity: preHandlerHookHandler = (request, _reply, done) => {
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
    };
    // Only the routes that declare `identify` carry the hook, ahead of their own preHandlers.
    app.addHook('onRoute', (route) => {
      if (route.config?.identify) addRouteHook(route, 'preHandler', resolveIdentity, 'first');
    });
  },
  { name: 'tokend-identity', dependencies: ['@fastify/cookie'] },
);
