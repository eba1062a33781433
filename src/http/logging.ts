// Logger options: secrets never reach a log line (credential headers, cookies, token query parameters).
// Every request's lines carry its id (reqId), which the response echoes as X-Request-Id.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';
/** What an incoming request id may look like to be kept: short, and safe in a log line and a header. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The caller's X-Request-Id when it is short and safe (so ids can be followed across services), else a new UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

const SECRET_QUERY_PARAMS =
  /([?&](?:token|k|code|code_verifier|client_secret|refresh_token|password)=)[^&#]*/gi;

/** The URL with the values of secret-bearing query parameters replaced. */
export const redactUrl = (url: string): string => url.replace(SECRET_QUERY_PARAMS, '$1[REDACTED]');

export const REDACTED_PATHS = [
  'req.headers["x-ripple-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-ripple-token"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  'token',
  'secret',
  // the same keys one level down (e.g. a logged body or scope object), and OAuth's secrets
  '*.password',
  '*.token',
  '*.secret',
  'client_secret',
  '*.client_secret',
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'code_verifier',
  '*.code_verifier',
];

export function loggerOptions(level: string): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          host: request.host,
          remoteAddress: request.ip,
        };
      },
    },
  };
}
