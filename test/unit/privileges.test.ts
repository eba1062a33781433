// limit(), isBanned(), ownerHoldsNothing() and effectivePrivileges() against an independent restatement of the documented privilege tables,
// exhaustive over single token bits and every combination of the user privileges that matter.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  TokenPrivilege,
  UserPrivilege,
  bearerPrivileges,
  effectivePrivileges,
  FAMILY_PRIVATE_TOKEN_PRIVILEGES,
  isBanned,
  limit,
  ownerHoldsNothing,
  requestedPrivileges,
  missingTokenPrivileges,
  tokenPrivilegeNames,
  unbanned,
  userPrivilegeNames,
} from '../../src/auth/privileges.ts';

// The documented tables (docs/api.md, Privileges), written out again by value so the test does not trust the module's own table.
const TOKEN_BITS: Array<[name: string, bit: number]> = [
  ['Read', 1],
  ['ReadConfidential', 2],
  ['Write', 4],
  ['ManageBadges', 8],
  ['BetaKeys', 16],
  ['ManageSettings', 32],
  ['ViewUserAdvanced', 64],
  ['ManageUser', 128],
  ['ManageRoles', 256],
  ['ManageAPIKeys', 512],
  ['Blog', 1024],
  ['APIMeta', 2048],
  ['Beatmap', 4096],
  ['Bancho', 8192],
];

const USER_BITS: Array<[name: string, bit: number]> = [
  ['UserPublic', 1],
  ['UserNormal', 2],
  ['UserDonor', 4],
  ['AdminAccessRAP', 8],
  ['AdminManageUsers', 16],
  ['AdminBanUsers', 32],
  ['AdminSilenceUsers', 64],
  ['AdminWipeUsers', 128],
  ['AdminManageBeatmap', 256],
  ['AdminManageServer', 512],
  ['AdminManageSetting', 1024],
  ['AdminManageBetaKey', 2048],
  ['AdminManageReport', 4096],
  ['AdminManageDocs', 8192],
  ['AdminManageBadges', 16384],
  ['AdminViewRAPLogs', 32768],
  ['AdminManagePrivilege', 65536],
  ['AdminSendAlerts', 131072],
  ['AdminChatMod', 262144],
  ['AdminKickUsers', 524288],
  ['UserPendingVerification', 1048576],
  ['UserTournamentStaff', 2097152],
  ['AdminCaker', 4194304],
];

const u = Object.fromEntries(USER_BITS) as Record<string, number>;

/** token bit → the user privilege names it requires; null = never granted. */
const REQUIRES: Record<number, string[] | null> = {
  1: null,
  2: ['UserNormal'],
  4: ['UserNormal'],
  8: ['AdminAccessRAP', 'AdminManageBadges'],
  16: ['AdminAccessRAP', 'AdminManageBetaKey'],
  32: ['AdminAccessRAP', 'AdminManageSetting'],
  64: ['AdminAccessRAP'],
  128: ['AdminAccessRAP', 'AdminManageUsers', 'AdminBanUsers'],
  256: ['AdminAccessRAP', 'AdminManageUsers', 'AdminManagePrivilege'],
  512: ['AdminAccessRAP', 'AdminManageUsers', 'AdminManageServer'],
  1024: ['AdminChatMod'],
  2048: ['AdminManageServer'],
  4096: ['AdminAccessRAP', 'AdminManageBeatmap'],
  8192: ['UserNormal'],
};

/** Every user privilege named in a requirement: 11 bits, 2048 combinations. */
const RELEVANT = [...new Set(Object.values(REQUIRES).flatMap((names) => names ?? []))].map((n) => u[n]!);
/** Every other user bit, set together to show they never matter. */
const IRRELEVANT = USER_BITS.map(([, bit]) => bit).filter((bit) => !RELEVANT.includes(bit));

function subsets(bits: number[]): number[] {
  const out: number[] = [];
  for (let mask = 0; mask < 2 ** bits.length; mask++) {
    let v = 0;
    bits.forEach((bit, i) => {
      if (mask & (2 ** i)) v += bit;
    });
    out.push(v);
  }
  return out;
}
const USER_COMBINATIONS = subsets(RELEVANT);
const sum = (bits: number[]) => bits.reduce((a, b) => a + b, 0);

/** The oracle, in exact BigInt arithmetic over any non-negative safe integers. */
function expectedLimit(token: number, user: number): number {
  const t = BigInt(token);
  const owner = BigInt(user);
  let granted = 0;
  for (const [, bit] of TOKEN_BITS) {
    const needs = REQUIRES[bit];
    if (needs === null || needs === undefined || (t & BigInt(bit)) === 0n) continue;
    const required = BigInt(needs.reduce((acc, n) => acc + u[n]!, 0));
    if ((owner & required) === required) granted += bit;
  }
  return granted;
}

describe('privilege tables', () => {
  it('match the documented tables name for name, bit for bit', () => {
    assert.deepEqual(Object.entries(TokenPrivilege), TOKEN_BITS);
    assert.deepEqual(Object.entries(UserPrivilege), USER_BITS);
  });

  it('name every bit of a mask, and nothing for unknown bits', () => {
    assert.deepEqual(tokenPrivilegeNames(2 | 4 | 8192), ['ReadConfidential', 'Write', 'Bancho']);
    assert.deepEqual(tokenPrivilegeNames(2 ** 14 + 2 ** 20), []);
    assert.deepEqual(userPrivilegeNames(3), ['UserPublic', 'UserNormal']);
    assert.deepEqual(userPrivilegeNames(2 ** 23), []);
    assert.deepEqual(missingTokenPrivileges(128, 128 | 2048), ['APIMeta']);
    assert.deepEqual(missingTokenPrivileges(0, 128 | 2048), ['ManageUser', 'APIMeta']);
    assert.deepEqual(missingTokenPrivileges(128 | 2048 | 4, 128 | 2048), []);
  });
});

describe('limit()', () => {
  for (const [name, bit] of TOKEN_BITS) {
    it(`${name} (${bit}) over all ${USER_COMBINATIONS.length} combinations of the relevant user privileges`, () => {
      const needs = REQUIRES[bit];
      const required = needs ? sum(needs.map((n) => u[n]!)) : 0;
      let granted = 0;
      for (const combo of USER_COMBINATIONS) {
        for (const user of [combo, combo + sum(IRRELEVANT)]) {
          const expected = needs !== null && needs !== undefined && (combo & required) === required ? bit : 0;
          assert.equal(limit(bit, user), expected, `${name} with user ${user}`);
          if (expected) granted++;
          // other requested bits never turn this one on or off
          assert.equal(
            limit(bit, user) & bit,
            limit(2 ** 14 - 1, user) & bit,
            `${name} alone vs all, user ${user}`,
          );
        }
      }
      if (needs === null) assert.equal(granted, 0, 'Read is never granted');
      else assert.equal(granted, 2 * 2 ** (RELEVANT.length - (needs?.length ?? 0)));
    });
  }

  it('each requirement alone: every required user bit is needed, and together they suffice', () => {
    for (const [name, bit] of TOKEN_BITS) {
      const needs = REQUIRES[bit];
      if (!needs) continue;
      const all = sum(needs.map((n) => u[n]!));
      assert.equal(limit(bit, all), bit, `${name} with exactly its requirements`);
      for (const n of needs) assert.equal(limit(bit, all - u[n]!), 0, `${name} without ${n}`);
    }
  });

  it('the full token mask against every relevant user combination matches the oracle', () => {
    for (const combo of USER_COMBINATIONS) {
      for (const user of [combo, combo | u.UserPublic!, combo + sum(IRRELEVANT)]) {
        assert.equal(limit(2 ** 14 - 1, user), expectedLimit(2 ** 14 - 1, user), `user ${user}`);
      }
    }
  });

  it('drops unknown bits, including values at and above 2^32', () => {
    const everything = 2 ** 23 - 1;
    for (const unknown of [2 ** 14, 2 ** 15, 2 ** 20, 2 ** 30, 2 ** 31, 2 ** 32, 2 ** 40, 2 ** 52, 2 ** 53]) {
      assert.equal(limit(unknown, everything), 0, `${unknown}`);
      assert.equal(limit(unknown + 4, everything), 4, `${unknown} + Write`);
    }
    assert.equal(limit(2 ** 32 - 1, everything), 2 ** 14 - 2);
    assert.equal(limit(2 ** 53 - 1, everything), 2 ** 14 - 2);
    assert.equal(limit(0, everything), 0);
    assert.equal(limit(2 ** 14 - 1, 0), 0);
  });

  it('reads user privileges at and above 2^32 bit by bit', () => {
    // 2^32 + UserNormal holds UserNormal; 2^32 alone holds nothing
    assert.equal(limit(4, 2 ** 32 + 2), 4);
    assert.equal(limit(4, 2 ** 32), 0);
    assert.equal(limit(2048, 2 ** 40 + 512), 2048);
    assert.equal(limit(2048, 2 ** 40 + 2 ** 33), 0);
  });

  it('matches the oracle for arbitrary safe integers (property)', () => {
    fc.assert(
      fc.property(
        fc.maxSafeNat(),
        fc.maxSafeNat(),
        (token, user) => limit(token, user) === expectedLimit(token, user),
      ),
      { numRuns: 5000 },
    );
  });

  it('is a subset of the request and idempotent (property)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 14 - 1 }), fc.nat({ max: 2 ** 23 - 1 }), (token, user) => {
        const once = limit(token, user);
        return (once & ~token) === 0 && limit(once, user) === once;
      }),
      { numRuns: 5000 },
    );
  });
});

/** Whether the user privileges hold UserNormal (2), in exact arithmetic. */
const holdsNormal = (user: number): boolean => (BigInt(user) & 2n) !== 0n;

describe('isBanned(), ownerHoldsNothing() and effectivePrivileges()', () => {
  it('a user is banned when lacking UserPublic or UserNormal, whatever else is held', () => {
    for (const others of [0, 4, 8 | 16 | 32 | 512, 2 ** 23 - 4, 2 ** 32, 2 ** 40 + 2 ** 23]) {
      assert.equal(isBanned(others), true, `${others}`);
      assert.equal(isBanned(others + 1), true, `${others} + UserPublic`);
      assert.equal(isBanned(others + 2), true, `${others} + UserNormal`);
      assert.equal(isBanned(others + 3), false, `${others} + both`);
    }
    assert.equal(isBanned(2 ** 32 + 3), false);
    assert.equal(isBanned(2 ** 32 + 1), true);
  });

  it('an owner holds nothing on any token exactly when lacking UserNormal, whatever else is held', () => {
    for (const others of [0, 4, 8 | 16 | 32 | 512, 2 ** 23 - 4, 2 ** 32, 2 ** 40 + 2 ** 23]) {
      assert.equal(ownerHoldsNothing(others), true, `${others}`);
      assert.equal(ownerHoldsNothing(others + 1), true, `${others} + UserPublic`);
      assert.equal(ownerHoldsNothing(others + 2), false, `${others} + UserNormal (restricted)`);
      assert.equal(ownerHoldsNothing(others + 3), false, `${others} + both`);
    }
  });

  it('effective privileges are limit() for an owner with UserNormal (active or restricted) and 0 without it', () => {
    for (const combo of USER_COMBINATIONS) {
      for (const user of [combo, combo | 1]) {
        for (const token of [0, 4, 2 | 4 | 8192, 128 | 2048, 2 ** 14 - 1, 2 ** 40 + 6]) {
          const expected = holdsNormal(user) ? expectedLimit(token, user) : 0;
          assert.equal(effectivePrivileges(token, user), expected, `token ${token}, user ${user}`);
        }
      }
    }
    assert.equal(
      effectivePrivileges(2 ** 14 - 1, 2 ** 23 - 1 - 2),
      0,
      'an admin without UserNormal (banned) has nothing, admin bits included',
    );
    assert.equal(
      effectivePrivileges(2 ** 14 - 1, 2 ** 23 - 1 - 1),
      2 ** 14 - 2,
      'an admin without UserPublic (restricted) keeps what limit() allows, as in the family',
    );
    assert.equal(effectivePrivileges(2 ** 14 - 1, 2 ** 23 - 1), 2 ** 14 - 2);
    // the admin panel's restriction, (p | 2) & ~1, of a player: what a player's token carries stays
    assert.equal(effectivePrivileges(2 | 4, (3 | 2) & ~1), 2 | 4);
  });

  it('a family private token asks for every privilege but Bancho, (Beatmap << 1) - 1; any other row for what it stores', () => {
    assert.equal(FAMILY_PRIVATE_TOKEN_PRIVILEGES, 8191);
    assert.equal(requestedPrivileges({ privileges: 0, private: 1 }, true), 8191);
    assert.equal(requestedPrivileges({ privileges: 8192, private: 1 }, true), 8191);
    assert.equal(requestedPrivileges({ privileges: 4, private: 0 }, true), 4);
    assert.equal(requestedPrivileges({ privileges: 0, private: 1 }, false), 0);
    // a player's hanayo session: 6 as the family's API answers, not 8198
    assert.equal(effectivePrivileges(requestedPrivileges({ privileges: 0, private: 1 }, true), 3), 6);
  });

  it("a bearer token's privileges are the user's effective privileges, and 0 while the application's owner is banned or restricted", () => {
    for (const combo of USER_COMBINATIONS) {
      for (const user of [combo, combo | 1]) {
        for (const owner of [0, 1, 2, 3, 3 | 512, 2 ** 23 - 2]) {
          for (const scope of [0, 2, 2 | 4, 2 ** 14 - 1]) {
            const expected = isBanned(owner) || !holdsNormal(user) ? 0 : expectedLimit(scope, user);
            assert.equal(
              bearerPrivileges(scope, user, owner),
              expected,
              `scope ${scope}, user ${user}, owner ${owner}`,
            );
          }
        }
      }
    }
  });
});

describe('unbanned()', () => {
  it('adds UserPublic and UserNormal and keeps every other bit of the low 32', () => {
    for (const user of [0, 1, 2, 3, 8 | 16 | 32, 2 ** 23 - 4, 2 ** 31, 2 ** 32 + 8]) {
      const lifted = unbanned(user);
      assert.equal(isBanned(lifted), false, `${user}`);
      assert.equal(lifted, ((user % 2 ** 32) | 3) >>> 0, `${user}`);
    }
    // A banned admin's tokens keep what the admin holds once the ban ends; an active user's are unchanged.
    assert.equal(limit(2 | 128, unbanned(8 | 16 | 32)), 2 | 128);
    assert.equal(limit(2 | 128, unbanned(3)), 2);
    for (const combo of USER_COMBINATIONS)
      assert.equal(limit(2 ** 14 - 1, unbanned(combo | 3)), limit(2 ** 14 - 1, combo | 3), `${combo}`);
  });
});
