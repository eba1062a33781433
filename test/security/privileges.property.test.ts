// The privilege model's invariants, for all inputs (fast-check): what a token is granted never exceeds what
// was asked for nor what its owner may hold; limiting is idempotent and monotone; a banned owner's tokens
// (no UserNormal) carry nothing, a restricted owner's (UserNormal, no UserPublic) what limit() allows. Then the same invariants end to end, through token creation and /v1/ping.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  TOKEN_PRIVILEGE_REQUIREMENTS,
  TokenPrivilege,
  effectivePrivileges,
  isBanned,
  limit,
  ownerHoldsNothing,
  type TokenPrivilegeName,
} from '../../src/auth/privileges.ts';
import { build, body } from '../helpers/app.ts';

/** a ⊆ b for bit masks of any safe integer size (BigInt: JS bit operators only see 32 bits). */
const subset = (a: number, b: number) => (BigInt(a) & ~BigInt(b)) === 0n;

/** Token privileges `owner` may hold: every known bit whose requirements `owner` meets in full. */
function mayHold(owner: number): number {
  let mask = 0;
  for (const [name, requires] of Object.entries(TOKEN_PRIVILEGE_REQUIREMENTS))
    if (subset(requires, owner)) mask |= TokenPrivilege[name as TokenPrivilegeName];
  return mask;
}

/** The mask as a number, when it is exactly representable as one. */
const safeNumber = (mask: bigint): number | undefined =>
  mask <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(mask) : undefined;

const ALL_TOKEN_BITS = Object.values(TokenPrivilege).reduce((a, b) => a | b, 0);

/** Masks as they come: mostly the known bits, sometimes anything up to 2^53. */
const tokenMask = fc.oneof(
  fc.nat({ max: 2 ** 14 - 1 }),
  fc.maxSafeNat(),
  fc.constantFrom(0, 2 ** 53, 2 ** 32 - 1),
);
const userMask = fc.oneof(
  fc.nat({ max: 2 ** 23 - 1 }),
  fc.maxSafeNat(),
  fc.constantFrom(0, 1, 2, 3, 2 ** 53),
);
const RUNS = { numRuns: 20_000 };

describe('privilege model invariants (properties)', () => {
  it('granted ⊆ requested', () => {
    fc.assert(
      fc.property(tokenMask, userMask, (r, u) => subset(limit(r, u), r)),
      RUNS,
    );
  });

  it('granted ⊆ what the owner may hold, and only known bits; Read is never granted', () => {
    fc.assert(
      fc.property(tokenMask, userMask, (r, u) => {
        const g = limit(r, u);
        return subset(g, mayHold(u)) && subset(g, ALL_TOKEN_BITS) && (g & TokenPrivilege.Read) === 0;
      }),
      RUNS,
    );
  });

  it('grants everything asked for that the owner may hold (limit drops nothing it need not)', () => {
    fc.assert(
      fc.property(
        tokenMask,
        userMask,
        (r, u) => limit(r, u) === (Number(BigInt(r) & BigInt(mayHold(u))) & ~1),
      ),
      RUNS,
    );
  });

  it('is idempotent: limit(limit(r, u), u) = limit(r, u)', () => {
    fc.assert(
      fc.property(tokenMask, userMask, (r, u) => limit(limit(r, u), u) === limit(r, u)),
      RUNS,
    );
  });

  it('is monotone in the owner: more user privileges never grant less', () => {
    fc.assert(
      fc.property(tokenMask, userMask, userMask, (r, u, extra) => {
        const more = safeNumber(BigInt(u) | BigInt(extra));
        fc.pre(more !== undefined);
        return subset(limit(r, u), limit(r, more));
      }),
      RUNS,
    );
  });

  it('is monotone in the request and distributes over it', () => {
    fc.assert(
      fc.property(tokenMask, tokenMask, userMask, (r1, r2, u) => {
        const union = safeNumber(BigInt(r1) | BigInt(r2));
        fc.pre(union !== undefined);
        return subset(limit(r1, u), limit(union, u)) && limit(union, u) === (limit(r1, u) | limit(r2, u));
      }),
      RUNS,
    );
  });

  it('limiting twice by two owners equals limiting once by what both hold (demotion, then fix)', () => {
    fc.assert(
      fc.property(tokenMask, userMask, userMask, (r, u1, u2) => {
        const both = Number(BigInt(u1) & BigInt(u2));
        return limit(limit(r, u1), u2) === limit(r, both);
      }),
      RUNS,
    );
  });

  it('a banned owner (lacking UserNormal) gives every token 0 effective privileges; any other owner limit()', () => {
    const bannedMask = userMask.map((u) => Number(BigInt(u) & ~2n)).chain((u) => fc.constantFrom(u, u | 1));
    fc.assert(
      fc.property(tokenMask, bannedMask, (r, u) => ownerHoldsNothing(u) && effectivePrivileges(r, u) === 0),
      RUNS,
    );
    fc.assert(
      fc.property(
        tokenMask,
        userMask,
        (r, u) => ownerHoldsNothing(u) || effectivePrivileges(r, u) === limit(r, u),
      ),
      RUNS,
    );
  });

  it('a restricted owner (UserNormal without UserPublic) keeps exactly what the same owner unrestricted holds', () => {
    // (above 2^53 the unrestricted form, u + 1, is no longer exact)
    const restrictedMask = userMask
      .map((u) => Number((BigInt(u) | 2n) & ~1n))
      .filter((u) => Number.isSafeInteger(u + 1));
    fc.assert(
      fc.property(
        tokenMask,
        restrictedMask,
        (r, u) =>
          isBanned(u) && !ownerHoldsNothing(u) && effectivePrivileges(r, u) === effectivePrivileges(r, u + 1),
      ),
      RUNS,
    );
  });

  it('end to end: creation grants limit(requested, owner); /ping shows it limited by the owner now', async (t) => {
    const h = await build(t, 'sqlite', {
      LOGIN_RATE_LIMIT: '1000000000',
      LOGIN_IP_RATE_LIMIT: '1000000000',
      TOKEN_CREATE_RATE_LIMIT: '1000000000',
    });
    const user = await h.createUser();
    // What the CLI and the database hold: user privileges up to 2^53 - 1.
    const storedUserMask = fc.oneof(
      fc.nat({ max: 2 ** 23 - 1 }),
      fc.maxSafeNat(),
      fc.constantFrom(0, 1, 2, 3),
    );
    const activeUserMask = storedUserMask.map((u) => Number(BigInt(u) | 3n)); // below 2^53 stays below
    await fc.assert(
      fc.asyncProperty(activeUserMask, tokenMask, storedUserMask, async (owner, requested, later) => {
        await h.setUserPrivileges(user.id, owner);
        const created = await h.api({
          method: 'POST',
          path: '/tokens',
          payload: { id: user.id, password: user.password, privileges: requested },
        });
        assert.equal(created.statusCode, 200, created.body);
        const granted = body(created).privileges as number;
        assert.equal(granted, limit(requested, owner));
        assert.ok(subset(granted, requested) && subset(granted, mayHold(owner)));

        await h.setUserPrivileges(user.id, later);
        const ping = await h.api({
          method: 'GET',
          path: '/ping',
          headers: { 'x-ripple-token': body(created).token as string },
        });
        assert.equal(ping.statusCode, 200, ping.body);
        const effective = body(ping).privileges as number;
        assert.equal(effective, effectivePrivileges(granted, later));
        assert.ok(subset(effective, granted) && subset(effective, mayHold(later)));
        if (ownerHoldsNothing(later)) assert.equal(effective, 0);
      }),
      { numRuns: 150 },
    );
  });
});
