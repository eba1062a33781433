// Security headers on every answer, in two sets, each computed once at start-up.
//
// API answers (JSON, JSONP, errors, health, metrics) carry the short set the OWASP REST Security Cheat
// Sheet recommends for an API: never cached, framed, sniffed or run as a document. Documents (the
// sign-in, consent and token pages, the API reference page) add helmet's full set for browsers on top.
// Setting helmet's thirteen headers on every JSON answer cost a good part of an authenticated read's
// CPU (bench/HISTORY.md, tuning log), for headers a JSON body never uses.
import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { REQUEST_ID_HEADER } from './logging.ts';

export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  // URLs may carry ?token= (a credential transport of the API): a browser showing an answer must not pass its URL on.
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

/** The headers helmet's middleware sets for these options (they never depend on the request). */
export function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: unknown) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let done = false;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err instanceof Error ? err : new Error(String(err));
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously; its headers cannot be precomputed');
  return Object.freeze(headers);
}

/** helmet's set, for the pages (see useDocumentHeaders). */
export const DOCUMENT_SECURITY_HEADERS = helmetHeaders({
  contentSecurityPolicy: {
    directives: {
      'frame-ancestors': ["'none'"],
      // The OAuth consent form redirects to the client's registered URI, which form-action would block.
      'form-action': null,
      'upgrade-insecure-requests': null,
    },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
});

/** The API set and the request id on every answer of the app (one synchronous hook). */
export const apiSecurityHeaders = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.headers(API_SECURITY_HEADERS);
      reply.header(REQUEST_ID_HEADER, request.id);
      done();
    });
  },
  { name: 'tokend-security-headers' },
);

/**
 * helmet's set for documents, registered inside the contexts that serve pages. It replaces the API's
 * policy (a page brings its own stricter Content-Security-Policy in its handler) and leaves caching to
 * the page.
 */
export function useDocumentHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.removeHeader('cache-control');
    reply.headers(DOCUMENT_SECURITY_HEADERS);
    done();
  });
}
