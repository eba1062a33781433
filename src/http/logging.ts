// The log: secrets never reach a line (credential headers, cookies, token query parameters). Every
// request's lines carry its id (reqId), which the response echoes as X-Request-Id. At info, each request
// writes one access line (AccessLog) instead of Fastify's two. Lines go to stdout off the event loop
// (logDestination), and are all written before the process exits (flushLog).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyLoggerOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, PinoLoggerOptions } from 'fastify/types/logger.js';
import pino from 'pino';
import { clientAddress } from './client-address.ts';

export const REQUEST_ID_HEADER = 'x-request-id';
/** What an incoming request id may look like to be kept: short, and safe in a log line and a header. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The caller's X-Request-Id when it is short and safe (so ids can be followed across services), else a new UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

const SECRET_QUERY_PARAMS = new Set([
  'token',
  'k',
  'code',
  'code_verifier',
  'client_secret',
  'refresh_token',
  'access_token',
  'password',
  'confirm_password',
  // the device grant's codes (a user code opens /device?user_code=…; the device code goes in a form)
  'user_code',
  'device_code',
  'id_token_hint',
]);

/** A query part as the query parser reads it: `%74oken` and `tok%65n` are `token`. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return part.toLowerCase();
  }
}

/**
 * Whether a parameter may carry a secret: its name is a secret's (also when only its leading word is,
 * as in a client's mistaken `token[]=` or `k%00=`), or its value holds a secret parameter of its own (a
 * query encoded twice: `x=1%26token%3D…`). tokend reads none of the near misses as a credential, but a
 * client's secret in them must not reach the log either.
 */
function mayCarrySecret(name: string, value: string): boolean {
  const word = /^[a-z_]*/.exec(decoded(name))?.[0] ?? '';
  if (SECRET_QUERY_PARAMS.has(word)) return true;
  for (const inner of decoded(value).split(/[&?;]/)) {
    const eq = inner.indexOf('=');
    if (eq !== -1 && SECRET_QUERY_PARAMS.has(inner.slice(0, eq).trim())) return true;
  }
  return false;
}

/** The URL with the values of secret-bearing query parameters replaced, whatever the spelling of their names. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const hash = url.indexOf('#', start);
  const end = hash === -1 ? url.length : hash;
  const pairs = url
    .slice(start + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      return mayCarrySecret(name, value) ? `${name}=[REDACTED]` : pair;
    });
  return `${url.slice(0, start + 1)}${pairs.join('&')}${url.slice(end)}`;
}

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
  'device_code',
  '*.device_code',
  'user_code',
  '*.user_code',
  'id_token',
  '*.id_token',
  // Database errors: mysql2 puts the statement with its parameters written in (err.sql); others keep the
  // parameters or the query beside the message. The message and code say what failed.
  'err.sql',
  'err.cause.sql',
  'err.parameters',
  'err.cause.parameters',
  'err.query',
  'err.cause.query',
];

export function loggerOptions(level: string): FastifyLoggerOptions & PinoLoggerOptions {
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

/**
 * Where the log goes: stdout, written by libuv's threads, never on the event loop. Lines wait until
 * 2 KiB of them are there (or a second has passed), so a busy server makes one write for many lines;
 * each write is whole lines and at most 4 KiB (PIPE_BUF), so the lines of several workers that share a
 * pipe never interleave. What is still waiting when the process exits, through process.exit too, pino
 * writes at its 'exit' event; serve() waits for every line on shutdown (flushLog).
 */
export function logDestination(): NonNullable<FastifyLoggerOptions['stream']> {
  return pino.destination({ dest: 1, sync: false, minLength: 2048, maxWrite: 4096, periodicFlush: 1000 });
}

/** Resolves once every line logged so far is written (pino's flush); at once for a logger without one. */
export function flushLog(log: FastifyBaseLogger): Promise<void> {
  const flush = (log as { flush?: (done: (err?: Error) => void) => void }).flush;
  return new Promise((resolve) => (flush === undefined ? resolve() : flush.call(log, () => resolve())));
}

/** What a request's access line holds besides its level, time and message. */
export interface AccessFields {
  reqId: string;
  method: string;
  /** The path and query as sent, the values of secret-bearing query parameters redacted (redactUrl). */
  url: string;
  statusCode: number;
  /** Milliseconds from the request's arrival until its answer was sent, to the microsecond. */
  responseTime: number;
  /** The client's address in its canonical form (src/http/client-address.ts). */
  remoteAddress: string;
}

export function accessFields(request: FastifyRequest, reply: FastifyReply): AccessFields {
  return {
    reqId: request.id,
    method: request.method,
    url: redactUrl(request.url),
    statusCode: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
    remoteAddress: clientAddress(request),
  };
}

/**
 * Fastify's per-request lines ("incoming request", then "request completed") replaced by one access line
 * per request at info, once its answer is sent (and, at debug, Fastify's first line still). The line goes through a child of the app's logger made
 * once, without the redaction rules (which cost more than the rest of the line): its fields are known,
 * and the one that could carry a secret, the URL, is redacted by redactUrl. An answer that failed while
 * being sent is logged at error, through the redaction rules; a thrown error is logged by the error
 * handler (src/http/errors.ts) with the request's id.
 */
export class AccessLog extends LogController {
  readonly #on: boolean;
  /** The access line's logger; null when no line is written (ACCESS_LOG=off, or a level above info). */
  #lines: FastifyBaseLogger | null | undefined;

  /** `on`: ACCESS_LOG. A line is written only when the logger's level lets info through too. */
  constructor(on: boolean) {
    super();
    this.#on = on;
  }

  /** At debug, a line as each request arrives too: one never answered shows there. */
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  /** The access line says 404, with the URL redacted (Fastify's line would not redact it). */
  override routeNotFound(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      request.server.log.error({ ...accessFields(request, reply), err: error }, 'request errored');
      return;
    }
    if (this.#lines === undefined) this.#lines = this.#linesOf(request.server.log);
    this.#lines?.info(accessFields(request, reply), 'request completed');
  }

  #linesOf(log: FastifyBaseLogger): FastifyBaseLogger | null {
    const enabled = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
    if (!this.#on || (enabled !== undefined && !enabled.call(log, 'info'))) return null;
    return log.child({}, { redact: [] });
  }
}

type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;

/**
 * A request's logger whose pino child (the one that carries reqId) is made by the first call its level
 * lets through. pino builds a child's bindings through the redaction rules, a cost every request would
 * pay (bench/HISTORY.md); most requests never log a line of their own (their access line is the app's),
 * so most never pay it.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings));
  }

  #log(level: LogLevel, args: LogArgs): void {
    const enabled = (this.#parent as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
    if (this.#child === undefined && enabled !== undefined && !enabled.call(this.#parent, level)) return;
    (this.#real()[level] as (...a: LogArgs) => void)(...args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: LogArgs): void {
    this.#log('fatal', args);
  }
  error(...args: LogArgs): void {
    this.#log('error', args);
  }
  warn(...args: LogArgs): void {
    this.#log('warn', args);
  }
  info(...args: LogArgs): void {
    this.#log('info', args);
  }
  debug(...args: LogArgs): void {
    this.#log('debug', args);
  }
  trace(...args: LogArgs): void {
    this.#log('trace', args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: a lazy request logger, or pino's own child for a route's level or serializers. */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined)
    return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings);
}
