// Protections below the router: a cap on open connections per client address, and envelope answers
// for requests the HTTP parser refuses (headers too large, too slow, malformed).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_ERROR_MESSAGE, sendEnvelope } from './envelope.ts';
import { API_SECURITY_HEADERS } from './security-headers.ts';
import { canonicalAddress } from './client-address.ts';

// Not `import { STATUS_CODES } from 'node:http'`: an ES import of node:http reads every export, and its
// lazy WebSocket exports load Node's bundled undici (idle memory for code tokend never uses).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

/**
 * Closes, at once, any connection beyond `max` open ones from the same socket address (an IPv6 client by
 * its /64, see client-address.ts), so one host
 * cannot hold every file descriptor. Behind a reverse proxy every connection comes from the proxy:
 * set the cap above the proxy's upstream pool, or 0, and cap per client at the proxy (SECURITY.md).
 */
export function capConnectionsPerAddress(server: Server, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const raw = socket.remoteAddress ?? '';
    const address = canonicalAddress(raw) ?? raw;
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * A client may half-close its side once it has sent a request (shutdown(SHUT_WR), `nc -N`) and still
 * wait for the answer. Node's default treats that FIN as an abort and drops the answer of any request
 * still being handled; with half-open sockets allowed, the answer is sent and then the socket closed.
 */
export function answerHalfClosedClients(server: Server): void {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true; // not in @types/node
}

const CLIENT_ERROR_MESSAGES: Record<number, string> = {
  400: 'Malformed HTTP request.',
  408: 'The request took too long to arrive.',
  431: 'The request headers are too large.',
};

function clientErrorStatus(code: string | undefined): number {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  return 400;
}

// Refusals below the router skip the app's hooks; they carry the API's security headers all the same.
const REFUSAL_HEADERS = API_SECURITY_HEADERS;

/** Fastify's clientErrorHandler: the parser's refusals answer with the envelope too, then close. */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = clientErrorStatus(err.code);
  const body = JSON.stringify({ code: status, message: CLIENT_ERROR_MESSAGES[status] });
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        Object.entries(REFUSAL_HEADERS)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('') +
        'Connection: close\r\n\r\n' +
        body,
    );
  socket.destroy();
}

/** Fastify's frameworkErrors: URLs the router cannot read answer with the envelope too. */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  reply.headers(REFUSAL_HEADERS);
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return sendEnvelope(
        reply,
        400,
        'Malformed URL: each % must start a valid percent-encoded UTF-8 character.',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return sendEnvelope(reply, 414, 'A segment of the URL path is too long.');
    default:
      return sendEnvelope(reply, 500, INTERNAL_ERROR_MESSAGE);
  }
}
