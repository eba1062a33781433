// Whose forwarding headers count (TRUST_PROXY), as the one form Fastify honours for every setting: a
// function of (address, hop). Fastify asks it hop by hop: hop 0 is the socket's peer, hop 1 the last
// X-Forwarded-For entry, hop 2 the one before it, and so on. The client address is the first hop it does
// not trust (or the first X-Forwarded-For entry when it trusts them all), and X-Forwarded-Proto/-Host are
// read only when it trusts hop 0. (Fastify turns a bare number into "trust nobody", so a hop count is
// handed over as this function too.)
import { isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import type { TrustProxy } from '../config.ts';

export type TrustFunction = (address: string, hop: number) => boolean;

/** The named ranges a TRUST_PROXY list may hold besides addresses and CIDRs. */
export const NAMED_RANGES: readonly string[] = ['loopback', 'linklocal', 'uniquelocal'];

/** The most proxies a hop count may name: beyond a handful, it is a mistake that would trust a client's own entries. */
export const MAX_HOPS = 16;

/**
 * What is wrong with one entry of a TRUST_PROXY list, or undefined when it is a named range, an address,
 * or an address/prefix-length with the address written out in full. The address must be one that
 * `node:net` reads as an IP address, stricter than proxy-addr, which also takes shorthands such as
 * `10.1` (10.0.0.1) that an operator writing them most likely meant as something else.
 */
export function trustEntryProblem(entry: string): string | undefined {
  if (NAMED_RANGES.includes(entry)) return undefined;
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  if (isIP(address) === 0)
    return `${JSON.stringify(entry)} is not an IP address, a CIDR (address/prefix length) or ${NAMED_RANGES.join('/')}`;
  if (slash === -1) return undefined;
  const prefix = entry.slice(slash + 1);
  const max = isIP(address) === 4 ? 32 : 128;
  if (/^0+$/.test(prefix))
    return `${JSON.stringify(entry)} would trust every address, letting any client choose its own`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) < 1 || Number(prefix) > max)
    return `${JSON.stringify(entry)} needs a prefix length from 1 to ${max} after the slash`;
  return undefined;
}

/** The function Fastify asks about each hop; false when no proxy is trusted. */
export function trustFunction(trust: TrustProxy): TrustFunction | false {
  if (trust === false) return false;
  if (typeof trust === 'number') {
    const hops = trust;
    return (_address, hop) => hop < hops;
  }
  return proxyAddr.compile(trust);
}
