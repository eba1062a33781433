// The two privilege bit tables (token and user privileges) and limit(): the only place they are defined.

export const TokenPrivilege = {
  Read: 1,
  ReadConfidential: 2,
  Write: 4,
  ManageBadges: 8,
  BetaKeys: 16,
  ManageSettings: 32,
  ViewUserAdvanced: 64,
  ManageUser: 128,
  ManageRoles: 256,
  ManageAPIKeys: 512,
  Blog: 1024,
  APIMeta: 2048,
  Beatmap: 4096,
  Bancho: 8192,
} as const;
export type TokenPrivilegeName = keyof typeof TokenPrivilege;

export const UserPrivilege = {
  UserPublic: 1,
  UserNormal: 2,
  UserDonor: 4,
  AdminAccessRAP: 8,
  AdminManageUsers: 16,
  AdminBanUsers: 32,
  AdminSilenceUsers: 64,
  AdminWipeUsers: 128,
  AdminManageBeatmap: 256,
  AdminManageServer: 512,
  AdminManageSetting: 1024,
  AdminManageBetaKey: 2048,
  AdminManageReport: 4096,
  AdminManageDocs: 8192,
  AdminManageBadges: 16384,
  AdminViewRAPLogs: 32768,
  AdminManagePrivilege: 65536,
  AdminSendAlerts: 131072,
  AdminChatMod: 262144,
  AdminKickUsers: 524288,
  UserPendingVerification: 1048576,
  UserTournamentStaff: 2097152,
  AdminCaker: 4194304,
} as const;
export type UserPrivilegeName = keyof typeof UserPrivilege;

const U = UserPrivilege;

// Read requires a bit no user can hold through this table (2^30), so it is never granted.
const NEVER = 2 ** 30;

/** For each token privilege, the user privileges its owner must hold, all of them. */
export const TOKEN_PRIVILEGE_REQUIREMENTS: Readonly<Record<TokenPrivilegeName, number>> = {
  Read: NEVER,
  ReadConfidential: U.UserNormal,
  Write: U.UserNormal,
  ManageBadges: U.AdminAccessRAP | U.AdminManageBadges,
  BetaKeys: U.AdminAccessRAP | U.AdminManageBetaKey,
  ManageSettings: U.AdminAccessRAP | U.AdminManageSetting,
  ViewUserAdvanced: U.AdminAccessRAP,
  ManageUser: U.AdminAccessRAP | U.AdminManageUsers | U.AdminBanUsers,
  ManageRoles: U.AdminAccessRAP | U.AdminManageUsers | U.AdminManagePrivilege,
  ManageAPIKeys: U.AdminAccessRAP | U.AdminManageUsers | U.AdminManageServer,
  Blog: U.AdminChatMod,
  APIMeta: U.AdminManageServer,
  Beatmap: U.AdminAccessRAP | U.AdminManageBeatmap,
  Bancho: U.UserNormal,
};

const TOKEN_BITS = Object.entries(TOKEN_PRIVILEGE_REQUIREMENTS).map(([name, requires]) => ({
  bit: TokenPrivilege[name as TokenPrivilegeName],
  requires,
}));

/** Highest token privilege bit is 2^13, so every known bit lives in the low 32 bits. */
const lowBits = (n: number): number => n >>> 0; // ToUint32: exact modulo 2^32 for integers up to 2^53

/** Token privileges the owner may hold, restricted to those the token asked for. Drops unknown bits. */
export function limit(tokenPrivileges: number, userPrivileges: number): number {
  const requested = lowBits(tokenPrivileges);
  const held = lowBits(userPrivileges);
  let granted = 0;
  for (const { bit, requires } of TOKEN_BITS) {
    if ((requested & bit) !== 0 && (held & requires) === requires && requires !== NEVER) granted |= bit;
  }
  return granted;
}

/** A user is banned when lacking UserPublic or UserNormal. */
export function isBanned(userPrivileges: number): boolean {
  const both = U.UserPublic | U.UserNormal;
  return (lowBits(userPrivileges) & both) !== both;
}

/** Privileges a request carries: limit(stored, owner's current privileges), and 0 for a banned owner. */
export function effectivePrivileges(tokenPrivileges: number, userPrivileges: number): number {
  return isBanned(userPrivileges) ? 0 : limit(tokenPrivileges, userPrivileges);
}

function names(table: Readonly<Record<string, number>>, mask: number): string[] {
  const bits = lowBits(mask);
  return Object.entries(table)
    .filter(([, bit]) => (bits & bit) !== 0)
    .map(([name]) => name);
}

export const tokenPrivilegeNames = (mask: number): string[] => names(TokenPrivilege, mask);
export const userPrivilegeNames = (mask: number): string[] => names(UserPrivilege, mask);

/** Names of the privileges in `needed` that `held` lacks. */
export function missingTokenPrivileges(held: number, needed: number): string[] {
  return tokenPrivilegeNames(needed & ~held);
}
