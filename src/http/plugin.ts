// Adds request.identity, resolved before the handler on routes whose config says `identify`: `true`
// for every kind of credential, or a `CredentialRule` naming the kinds the route takes, each other kind
// answered here with the one refusal for it (the handler then never runs). This plugin only reads the
// credential from the request; the credential core (src/auth/credentials.ts) turns it into an identity.
// A bearer value that matches nothing gets RFC 6750's invalid_token challenge here, for every route
// (src/http/bearer-challenge.ts).
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { CredentialCore } from '../auth/credentials.ts';
import { NO_IDENTITY, type Identity } from '../auth/identity.ts';
import { readCredential } from './credentials.ts';
import { sendEnvelope } from './envelope.ts';
import { UNKNOWN_BEARER, challenge, refuseAccessToken, refuseApplicationToken } from './bearer-challenge.ts';
import { sentFromOrigin, serverOrigin } from './origin.ts';

/** The kinds of identity: none (no credential, or one that matches nothing), token, bearer, client. */
export type IdentityKind = Identity['kind'];

/** Every kind: what `identify: true` takes. */
export const ANY_IDENTITY: readonly IdentityKind[] = ['none', 'token', 'bearer', 'client'];

/** Which credentials a route takes, and what it says to the others. */
export interface CredentialRule {
  /** the kinds of identity the handler gets */
  takes: readonly IdentityKind[];
  /** what an application's own token (client credentials) cannot do here: completes "it cannot …" */
  clientCannot?: string;
  /** the 401's message to an OAuth access token for a user (bearer), when the route does not take one */
  bearerRefusal?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Resolve the request's credential into request.identity before the handler runs (see CredentialRule). */
    identify?: boolean | CredentialRule;
  }
  interface FastifyRequest {
    /** Set before the handler on routes with `identify` (NO_IDENTITY without a credential). */
    identity: Identity | null;
  }
}

/** The message of a request without a credential where one is needed. */
export const NO_CREDENTIAL = 'No credential was given, or it matches no token.';

/** Answers a request whose kind of credential the route does not take. */
function refuseKind(reply: FastifyReply, identity: Identity, rule: CredentialRule): void {
  switch (identity.kind) {
    case 'client':
      refuseApplicationToken(reply, identity, rule.clientCannot ?? 'do this');
      return;
    case 'bearer':
      refuseAccessToken(reply, identity, rule.bearerRefusal ?? 'A bearer token cannot do this.');
      return;
    default:
      sendEnvelope(reply, 401, NO_CREDENTIAL);
  }
}

/**
 * The identity of a request to a route with `identify`, of one of the kinds its rule takes (`takes`, the
 * same list as the rule's): the identity plugin has answered any other.
 */
export function identityOf<K extends IdentityKind>(
  request: FastifyRequest,
  takes: readonly K[],
): Extract<Identity, { kind: K }> {
  const identity = request.identity ?? NO_IDENTITY;
  if (!(takes as readonly IdentityKind[]).includes(identity.kind))
    throw new Error(`a route given an identity of a kind it does not take (${identity.kind})`);
  return identity as Extract<Identity, { kind: K }>;
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
      const rule = request.routeOptions.config.identify;
      if (rule === undefined || rule === false) return done();
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
        if (rule !== true && !rule.takes.includes(resolved.kind)) return refuseKind(reply, resolved, rule);
        done();
      };
      if (!(identity instanceof Promise)) return settle(identity);
      identity.then(settle, (err: unknown) => done(err as Error));
    };
    app.addHook('preHandler', resolveIdentity);
  },
  { name: 'tokend-identity', dependencies: ['@fastify/cookie'] },
);
