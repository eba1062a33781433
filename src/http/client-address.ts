// The client's address, in one canonical form, for everything keyed by it (login limits, the connection
// cap). The address Fastify derives (the socket's, or X-Forwarded-For's as TRUST_PROXY allows) is checked:
// a value that is not an IP address falls back to the socket's. A port some balancers add to their
// X-Forwarded-For entries (`203.0.113.7:5678`, `[2001:db8::1]:443`) is dropped: it is not part of who
// the client is. IPv4-mapped IPv6 is IPv4, and an IPv6 client counts by its /64, the block one subscriber
// is usually given: otherwise each address of it would get a fresh budget.
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { shortUserAgent, type Act, type EventSink, type Means } from '../auth/security-log.ts';

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The 8 groups of an IPv6 address (with an embedded IPv4 tail turned into two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const v4 = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (v4?.[1]) {
    const [a, b, c, d] = v4[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => parseInt(g, 16));
}

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

/** The canonical key of an address, or undefined when `raw` is not an IP address. */
export function canonicalAddress(raw: string): string | undefined {
  const value = withoutPort(raw.trim())?.replace(/%[0-9a-z._~-]+$/i, ''); // a zone index names no other host
  if (value === undefined) return undefined;
  if (isIPv4(value)) return value;
  if (!isIPv6(value)) return undefined;
  const mapped = MAPPED_V4.exec(value);
  if (mapped?.[1] && isIPv4(mapped[1])) return mapped[1];
  const groups = ipv6Groups(value);
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g))) return undefined;
  // ::ffff:a.b.c.d written with hex groups (::ffff:cb00:7107) is the same IPv4 client.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi, lo] = [groups[6]!, groups[7]!];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The request's client in canonical form: Fastify's address when it is one, else the socket's. */
export function clientAddress(request: FastifyRequest): string {
  return canonicalAddress(request.ip) ?? canonicalAddress(request.socket.remoteAddress ?? '') ?? 'unknown';
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
