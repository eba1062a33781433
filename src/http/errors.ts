// One error handler decides what callers see: a 4xx explains itself; a 5xx never shows its inside.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_ERROR_MESSAGE, sendEnvelope } from './envelope.ts';

/** An expected refusal with the code and message to send. */
export class HttpError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

function clientMessage(err: FastifyError, limit: number): string {
  if (err.validation) return `Invalid ${err.validationContext ?? 'request'}: ${err.message}`;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `The request body is too large (at most ${limit} bytes).`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type: send the body as application/json.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The body is empty; send a JSON object.';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return `Bad JSON: ${err.message}`;
  }
  if (err instanceof SyntaxError || err.name === 'SyntaxError') return `Bad JSON: ${err.message}`;
  return err.message;
}

export function makeErrorHandler(bodyLimit: number) {
  return function handleError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const status = err.statusCode ?? 500;
    if (status >= 500 || status < 400) {
      request.log.error({ err }, 'request failed');
      return sendEnvelope(reply, 500, INTERNAL_ERROR_MESSAGE);
    }
    if (err.validation || err instanceof SyntaxError)
      return sendEnvelope(reply, 400, clientMessage(err, bodyLimit));
    return sendEnvelope(reply, status, clientMessage(err, bodyLimit));
  };
}

export function notFound(_request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Real-404', 'yes');
  return sendEnvelope(reply, 404, 'No such endpoint.');
}

/** Where a browser opening the server's root, or {base_url} itself, is sent (it signs in from there). */
export const BROWSER_HOME = '/tokens';

/** The quality a media range of an Accept header gives, or undefined when it names another type. */
function qualityOf(range: string, type: string): { q: number; specificity: number } | undefined {
  const [name = '', ...parameters] = range.split(';');
  const media = name.trim().toLowerCase();
  const specificity =
    media === type ? 2 : media === `${type.split('/')[0]}/*` ? 1 : media === '*/*' ? 0 : undefined;
  if (specificity === undefined) return undefined;
  let q = 1;
  for (const parameter of parameters) {
    const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(parameter);
    if (m) q = Math.min(1, Number(m[1]) || 0);
  }
  return { q, specificity };
}

/** The quality an Accept header gives a media type: that of its most specific range (RFC 9110 §12.5.1). */
function acceptQuality(accept: string, type: string): number {
  let best: { q: number; specificity: number } | undefined;
  for (const range of accept.split(',')) {
    const found = qualityOf(range, type);
    if (found && (best === undefined || found.specificity > best.specificity)) best = found;
  }
  return best?.q ?? 0;
}

/**
 * Whether an Accept header is a browser's asking for a page: it names HTML itself (a wildcard does not
 * count) and ranks it above JSON. curl's default (any type) and an API client's JSON are not.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let html = 0;
  for (const range of accept.split(','))
    for (const type of ['text/html', 'application/xhtml+xml']) {
      const found = qualityOf(range, type);
      if (found?.specificity === 2) html = Math.max(html, found.q);
    }
  return html > 0 && html > acceptQuality(accept, 'application/json');
}

/**
 * A browser's GET (or HEAD) of `/`, `{base_url}` or `{base_url}/` is sent to the token page, which sends
 * it on to sign-in when needed; an API client asking the same gets the 404 of any unknown path. JSONP and
 * pls200 requests are the API's. Returns whether the redirect was sent.
 */
function sentBrowserHome(request: FastifyRequest, reply: FastifyReply, basePath: string): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const [path, search = ''] = request.url.split('?', 2);
  if (path !== '/' && path !== basePath && path !== `${basePath}/`) return false;
  const query = new URLSearchParams(search);
  if (query.has('pls200') || query.has('callback')) return false;
  if (!prefersHtml(request.headers.accept)) return false;
  void reply.header('Vary', 'Accept').redirect(BROWSER_HOME, 303);
  return true;
}

/** Letters A to Z as a to z; nothing else changes (the family's routes are ASCII). */
const asciiLowerCase = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * A path of {base_url} written in other letters is redirected to the route it names, as the Ripple
 * family's router does (`/API/v1/tokens` → `/api/v1/tokens`): 301 for a GET, 307 for any other method
 * (which the client repeats with its body). Only a path of printable ASCII whose lower-case form is under
 * {base_url} (BASE_PATH itself in its own letters) and is a route of this method; the query string goes
 * along as it came. The Location is a path of this server, never a URL: no request makes it name another
 * host. Returns whether the redirect was sent.
 */
function sentCaseRedirect(request: FastifyRequest, reply: FastifyReply, basePath: string): boolean {
  const queryAt = request.url.indexOf('?');
  const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
  if (!/^\/[\x21-\x7e]*$/.test(path)) return false;
  const lower = asciiLowerCase(path);
  const base = asciiLowerCase(basePath);
  if (lower === path || !lower.startsWith(`${base}/`)) return false;
  const target = basePath + lower.slice(base.length);
  // (a Location starting with // or /\ would name a host; a route never does, but no path may try)
  if (target.startsWith('//') || target.startsWith('/\\')) return false;
  if (request.server.findRoute({ method: request.method, url: target }) === null) return false;
  const query = queryAt === -1 ? '' : request.url.slice(queryAt);
  void reply.redirect(target + query, request.method === 'GET' ? 301 : 307);
  return true;
}

/** Answers a browser's request for an address that has no page, with a page (the web's). */
export type BrowserNotFound = (request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * Whether a request outside {base_url} is a browser opening a page: a GET or HEAD whose Accept prefers HTML,
 * without the API's pls200 or callback.
 */
function opensPage(request: FastifyRequest, basePath: string): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const [path = '', search = ''] = request.url.split('?', 2);
  if (path === basePath || path.startsWith(`${basePath}/`)) return false;
  const query = new URLSearchParams(search);
  if (query.has('pls200') || query.has('callback')) return false;
  return prefersHtml(request.headers.accept);
}

/**
 * The not-found handler of the server outside {base_url}: a browser at `/` goes to the token page; a
 * browser opening any other unknown address gets `page` (an HTML 404 with a way back); API clients (no
 * Accept, a wildcard, JSON first) get the JSON 404 with X-Real-404, as under {base_url}.
 */
export function rootNotFound(basePath: string, page?: BrowserNotFound) {
  return function rootNotFoundHandler(request: FastifyRequest, reply: FastifyReply) {
    if (sentCaseRedirect(request, reply, basePath)) return reply;
    if (sentBrowserHome(request, reply, basePath)) return reply;
    if (page && opensPage(request, basePath)) return page(request, reply);
    return notFound(request, reply);
  };
}

/**
 * The not-found handler of {base_url}: a path that has routes for other methods is a 405 envelope whose
 * Allow header lists them (found by Fastify's router, so `/v1/tokens/:id` matches `/v1/tokens/7`); any
 * other path is the 404 of notFound, and a browser opening {base_url} itself goes to the token page. With
 * an empty BASE_PATH it is the whole server's not-found handler. `methods` holds every method a route under
 * {base_url} was declared with (HEAD among them where Fastify adds it for a GET), filled in as the routes
 * are added.
 */
export function apiNotFound(methods: ReadonlySet<string>, basePath: string) {
  return function apiNotFoundHandler(request: FastifyRequest, reply: FastifyReply) {
    if (sentCaseRedirect(request, reply, basePath)) return reply;
    if (sentBrowserHome(request, reply, basePath)) return reply;
    const allowed = [...methods]
      .filter((method) => request.server.findRoute({ method, url: request.url }) !== null)
      .sort();
    // (a route that sends its own not-found answer is not a wrong method)
    if (allowed.length === 0 || allowed.includes(request.method)) return notFound(request, reply);
    reply.header('Allow', allowed.join(', '));
    return sendEnvelope(
      reply,
      405,
      `This endpoint does not take ${request.method}; it takes ${allowed.join(', ')}.`,
    );
  };
}
