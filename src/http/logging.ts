// Logger options: secrets never reach a log line (credential headers, cookies, token query parameters).
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

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
