// The client's address, in one canonical form, for everything keyed by it (login limits, the connection
// cap). The address Fastify derives (the socket's, or X-Forwarded-For's as TRUST_PROXY allows) is checked:
// a value that is not an IP address falls back to the socket's. A port some balancers add to their
// X-Forwarded-For entries (`203.0.113.7:5678`, `[2001:db8::1]:443`) is dropped: it is not part of who
// the client is. IPv4-mapped IPv6 is IPv4, and an IPv6 client counts by its /64, the block one subscriber
// is usually given: otherwise each address of it would get a fresh budget.
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { shortUserAgent, type Act, type EventSink, type Means } from '../auth/security-log.ts';

/** `a.b.c.d:port`: the one form with a single colon, which no IPv6 address has. */
const V4_WITH_PORT = /^([\d.]+):(\d{1,5})$/;
/** `[v6]:port` (or `[v6]`): an IPv6 address is bracketed before a port, else its last group would read as one. */
const BRACKETED_V6 = /^\[([^\]]*:[^\]]*)\](?::(\d{1,5}))?$/;

/**
 * The address of an X-Forwarded-For entry without the port a balancer may have added, or undefined when
 * the port is no port. A bare IPv6 address is left whole: only the bracketed form carries a port.
 */
function withoutPort(value: string): string | undefined {
  const match = V4_WITH_PORT.exec(value) ?? BRACKETED_V6.exec(value);
  if (!match) return value;
  return match[2] === undefined || Number(match[2]) <= 65535 ? match[1] : undefined;
}

/** `::a.b.c.d`: IPv4-compatible (deprecated), which ipaddr.js reads as IPv4-mapped; it is an IPv6 address of `::`'s /64. */
const IPV4_COMPATIBLE = /^::\d+\.\d+\.\d+\.\d+$/;

/**
 * The canonical key of an address, or undefined when `raw` is not an IP address. Node decides what is an
 * address (as it does for Fastify's request.ip: no leading zeros in IPv4); ipaddr.js reads an IPv6 one.
 */
export function canonicalAddress(raw: string): string | undefined {
  const value = withoutPort(raw.trim())?.replace(/%[0-9a-z._~-]+$/i, ''); // a zone index names no other host
  if (value === undefined) return undefined;
  if (isIPv4(value)) return value;
  if (!isIPv6(value)) return undefined;
  // Node takes anything after a % as a zone index (ipaddr.js does not): the address is what comes before.
  const unzoned = value.split('%', 1)[0]!;
  const address = ipaddr.IPv6.parse(IPV4_COMPATIBLE.test(unzoned) ? '::' : unzoned);
  // ::ffff:a.b.c.d, in either spelling (::ffff:cb00:7107), is the same IPv4 client.
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return `${address.parts
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * Each connection's own address in canonical form, worked out once per connection: every request's
 * access line names its client, a keep-alive client sends many requests on one connection, and an IPv6
 * address (an IPv4 client of a server listening on `::` too, as `::ffff:…`) takes ipaddr.js some
 * microseconds to read.
 */
const socketAddresses = new WeakMap<object, string | undefined>();

function socketAddress(socket: FastifyRequest['socket']): string | undefined {
  if (socketAddresses.has(socket)) return socketAddresses.get(socket);
  const address = canonicalAddress(socket.remoteAddress ?? '');
  socketAddresses.set(socket, address);
  return address;
}

/** The request's client in canonical form: Fastify's address when it is one, else the socket's. */
export function clientAddress(request: FastifyRequest): string {
  const socket = request.socket;
  const ip = request.ip;
  // Without a trusted proxy Fastify's address is the socket's: the connection's canonical form.
  const address = ip === socket.remoteAddress ? socketAddress(socket) : canonicalAddress(ip);
  return address ?? socketAddress(socket) ?? 'unknown';
}

/**
 * Whether the request's client has gone: its connection was reset, or it sent its FIN. (A client may
 * half-close once its request is sent and still read the answer: such a login is answered when its
 * password check runs at once, and dropped only when the check had to wait in a queue.)
 */
export function clientGone(request: FastifyRequest): () => boolean {
  const socket = request.raw.socket;
  return () => socket.destroyed || socket.readableEnded;
}

/**
 * What an event of the security log (src/auth/security-log.ts) records of the request that made it:
 * `actor` is the account whose credential acted (null: none yet, or an application).
 */
export function requestAct(
  request: FastifyRequest,
  means: Means,
  by: string | number | null,
  at: number,
  events: EventSink,
  actor: number | null = null,
): Act {
  return {
    means,
    by,
    actor,
    address: clientAddress(request),
    userAgent: shortUserAgent(request.headers['user-agent']),
    at,
    events,
  };
}
