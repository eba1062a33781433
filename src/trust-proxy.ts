// Whose forwarding headers count (TRUST_PROXY), as the one form Fastify honours for every setting: a
// function of (address, hop). Fastify asks it hop by hop: hop 0 is the socket's peer, hop 1 the last
// X-Forwarded-For entry, hop 2 the one before it, and so on. The client address is the first hop it does
// not trust (or the first X-Forwarded-For entry when it trusts them all), and X-Forwarded-Proto/-Host are
// read only when it trusts hop 0. (Fastify turns a bare number into "trust nobody", so a hop count is
// handed over as this function too.)
import { BlockList, isIP, SocketAddress } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { integerInRange } from './decimal-integer.ts';

/**
 * TRUST_PROXY as config reads it: false (the socket's address), a hop count, or the proxies to trust
 * (addresses, CIDRs, loopback…). What each form trusts: SECURITY.md.
 */
export type TrustProxy = false | number | string[];

export type TrustFunction = (address: string, hop: number) => boolean;

/** The named ranges a TRUST_PROXY list may hold besides addresses and CIDRs. */
export const NAMED_RANGES: readonly string[] = ['loopback', 'linklocal', 'uniquelocal'];

/** The most proxies a hop count may name: beyond a handful, it is a mistake that would trust a client's own entries. */
export const MAX_HOPS = 16;

/**
 * The widest range a TRUST_PROXY list may name, as the shortest prefix length of each family: the widest
 * private range of each (10.0.0.0/8; fc00::/7, which is `uniquelocal`). A wider one holds far more than
 * any proxy fleet, such as half of all addresses (`0.0.0.0/1`), and would let most clients choose their own.
 */
export const MIN_PREFIX = { 4: 8, 6: 7 } as const;

/**
 * What is wrong with one entry of a TRUST_PROXY list, or undefined when it is a named range, an address,
 * or an address/prefix-length with the address written out in full. The address must be one that
 * `node:net` reads as an IP address, stricter than proxy-addr, which also takes shorthands such as
 * `10.1` (10.0.0.1) that an operator writing them most likely meant as something else. A range may be no
 * wider than MIN_PREFIX allows, and an IPv6 entry may not reach into the IPv4-mapped addresses: those
 * stand for IPv4 clients (`::ffff:0:0/96` trusts every one of them), so IPv4 is written as IPv4.
 */
export function trustEntryProblem(entry: string): string | undefined {
  if (NAMED_RANGES.includes(entry)) return undefined;
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family !== 4 && family !== 6)
    return `${JSON.stringify(entry)} is not an IP address, a CIDR (address/prefix length) or ${NAMED_RANGES.join('/')}`;
  const max = family === 4 ? 32 : 128;
  let length = max;
  if (slash !== -1) {
    const prefix = entry.slice(slash + 1);
    if (/^0+$/.test(prefix))
      return `${JSON.stringify(entry)} would trust every address, letting any client choose its own`;
    const given = integerInRange(prefix, 1, max);
    if (given === undefined)
      return `${JSON.stringify(entry)} needs a prefix length from 1 to ${max} after the slash`;
    length = given;
  }
  if (length < MIN_PREFIX[family])
    return (
      `${JSON.stringify(entry)} is wider than any proxies' range and would let most clients choose their ` +
      `address: name the proxies' own addresses or range (IPv${family}: /${MIN_PREFIX[family]} or longer` +
      `${family === 4 ? ', as in 10.0.0.0/8' : ', as in fd00::/8 or uniquelocal'})`
    );
  if (family === 6) return mappedProblem(entry, address, length);
  return undefined;
}

/** The problem of an IPv6 entry that reaches into the IPv4-mapped addresses, or undefined. */
function mappedProblem(entry: string, address: string, length: number): string | undefined {
  // IPv4-mapped IPv6 (::ffff:a.b.c.d): the trust check matches IPv4 peers against these ranges too.
  const mapped = new BlockList();
  mapped.addSubnet('::ffff:0:0', 96, 'ipv6');
  if (length >= 96 && mapped.check(address, 'ipv6')) {
    // SocketAddress writes a mapped address with its IPv4 tail (::ffff:a00:1 is ::ffff:10.0.0.1).
    const v4 = new SocketAddress({ address, family: 'ipv6' }).address.slice('::ffff:'.length);
    const v4Form = length === 128 ? v4 : `${v4}/${length - 96}`;
    return length - 96 < MIN_PREFIX[4]
      ? `${JSON.stringify(entry)} is IPv4-mapped IPv6 for ${v4Form}, wider than any proxies' range, and would ` +
          "let most IPv4 clients choose their address: name the proxies' own IPv4 addresses or range " +
          `(/${MIN_PREFIX[4]} or longer)`
      : `${JSON.stringify(entry)} is IPv4-mapped IPv6, which stands for IPv4 clients: write ${v4Form} instead`;
  }
  const range = new BlockList();
  range.addSubnet(address, length, 'ipv6');
  if (range.check('::ffff:0:0', 'ipv6'))
    return (
      `${JSON.stringify(entry)} holds every IPv4-mapped IPv6 address (::ffff:0:0/96), which stand for ` +
      "IPv4 clients: name the proxies' IPv6 range without them, and IPv4 proxies in the IPv4 form"
    );
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
