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
    app.addHook('preHandler', async (request) => {
      if (request.routeOptions.config.identify) request.identity = await identify(request);
    });
  },
  { name: 'tokend-identity', dependencies: ['@fastify/cookie'] },
);
