// Adds request.identity, resolved before the handler on routes whose config says `identify: true`.
// This plugin only reads the credential from the request; the credential core (src/auth/credentials.ts)
// turns it into an identity. A bearer value that matches nothing gets RFC 6750's invalid_token challenge
// here, for every route (src/http/bearer-challenge.ts).
import fp from 'fastify-plugin';
import type { preHandlerHookHandler } from 'fastify';
import type { CredentialCore } from '../auth/credentials.ts';
import type { Identity } from '../auth/identity.ts';
import { readCredential } from './credentials.ts';
import { sendEnvelope } from './envelope.ts';
import { UNKNOWN_BEARER, challenge } from './bearer-challenge.ts';
import { sentFromOrigin, serverOrigin } from './origin.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Resolve the request's credential into request.identity before the handler runs. */
    identify?: boolean;
  }
  interface FastifyRequest {
    /** Set before the handler on routes with `identify: true` (NO_IDENTITY without a credential). */
    identity: Identity | null;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface IdentityPluginOptions {
  credentials: CredentialCore;
  /** PUBLIC_URL: this server's origin, when it is not taken from each request */
  publicUrl: string | undefined;
}

export const identityPlugin = fp<IdentityPluginOptions>(
  async (app, { credentials, publicUrl }) => {
    app.decorateRequest('identity', null);
    // A callback hook: a request without a credential goes on without a promise or a microtask.
    const resolveIdentity: preHandlerHookHandler = (request, reply, done) => {
      if (request.routeOptions.config.identify !== true) return done();
      let identity: Identity | Promise<Identity>;
      let presentedBearer = false;
      try {
        const credential = readCredential(request);
        // Browsers send the cookie with requests that other sites start: a write that only the cookie
        // identifies must come from this server's own pages (the 403 envelope, and nothing changes).
        if (
          credential?.source === 'cookie' &&
          !SAFE_METHODS.has(request.method) &&
          !sentFromOrigin(request, serverOrigin(request, publicUrl))
        ) {
          sendEnvelope(
            reply,
            403,
            'This request is identified only by the session cookie and was not sent from this site ' +
              '(its Origin or Referer is missing or another): nothing was changed. Send the token in a header instead.',
          );
          return;
        }
        presentedBearer = credential?.source === 'bearer';
        // The address as Fastify derived it: the last-used write makes it canonical, off the request.
        identity = credentials.identify(credential?.value, presentedBearer, request.ip);
      } catch (err) {
        return done(err as Error);
      }
      const settle = (resolved: Identity) => {
        request.identity = resolved;
        // RFC 6750 §3.1: a bearer value that matches nothing; the route's own answer stays as it is.
        if (presentedBearer && resolved.kind === 'none') challenge(reply, UNKNOWN_BEARER);
        done();
      };
      if (!(identity instanceof Promise)) return settle(identity);
      identity.then(settle, (err: unknown) => done(err as Error));
    };
    app.addHook('preHandler', resolveIdentity);
  },
  { name: 'tokend-identity', dependencies: ['@fastify/cookie'] },
);
