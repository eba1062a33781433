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

/**
 * What each token privilege lets a token (or an application) do, in plain words: `short` fits in a sentence
 * ("May … ."), `full` says everything it allows. The consent page (through the OAuth scopes), the token
 * page's form and its connected applications all read them here.
 */
export const TOKEN_PRIVILEGE_DESCRIPTIONS: Readonly<
  Record<TokenPrivilegeName, { readonly short: string; readonly full: string }>
> = {
  Read: { short: 'read public information', full: 'Read public information (no longer granted).' },
  ReadConfidential: {
    short: 'read private information and list your tokens',
    full: 'Read your private account information, such as your email address and settings, and list your API tokens (their descriptions, privileges and last use; never their secrets).',
  },
  Write: { short: 'make changes', full: 'Make changes to your account and post on your behalf.' },
  ManageBadges: { short: 'manage badges', full: 'Create, change and remove badges, and give them to users.' },
  BetaKeys: { short: 'manage beta keys', full: 'Create and remove beta keys (invitations to the server).' },
  ManageSettings: { short: 'change server settings', full: "Change the server's settings." },
  ViewUserAdvanced: {
    short: "see users' private details",
    full: 'See advanced details of any user that only staff may see.',
  },
  ManageUser: {
    short: 'manage users',
    full: "Change other users' accounts: edit, silence, restrict or ban them.",
  },
  ManageRoles: { short: "change users' privileges", full: "Change other users' privileges and roles." },
  ManageAPIKeys: { short: "manage others' tokens", full: 'See and revoke the API tokens of other users.' },
  Blog: { short: 'post on the blog', full: "Write and edit posts on the server's blog." },
  APIMeta: {
    short: "run the API's maintenance tasks",
    full: "Run the API's maintenance tasks, such as re-limiting every token's privileges.",
  },
  Beatmap: { short: 'manage beatmaps', full: 'Rank, love and update beatmaps.' },
  Bancho: { short: 'connect to the game server', full: 'Connect to the game server (Bancho) as you.' },
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

/**
 * The specification's "banned": lacking UserPublic or UserNormal. Such a user obtains no new credential:
 * token creation answers 402, and web sign-in, sudo mode, approving an application, exchanging a code or a
 * refresh token are refused (src/users/password-login.ts, src/oauth/). An application whose owner is so is
 * suspended. What the user's existing tokens carry is ownerHoldsNothing's rule, not this one.
 */
export function isBanned(userPrivileges: number): boolean {
  const both = U.UserPublic | U.UserNormal;
  return (lowBits(userPrivileges) & both) !== both;
}

/**
 * Whether every token of an owner with these privileges carries nothing: the owner lacks UserNormal (the
 * family's ban). An owner who holds UserNormal but not UserPublic (restricted, as the family's admin panel
 * restricts: `(p | 2) & ~1`) keeps what limit() allows, as in the family; a banned owner holds nothing,
 * admin bits included (the family's limit alone would leave a banned admin their admin bits).
 */
export function ownerHoldsNothing(userPrivileges: number): boolean {
  return (lowBits(userPrivileges) & U.UserNormal) === 0;
}

/**
 * The user privileges with a ban lifted (UserPublic and UserNormal set): what `tokend import-ripple`
 * limits a banned or restricted user's tokens by, so that they keep their stored privileges, powerless
 * while a ban lasts (effectivePrivileges) and back on unban.
 */
export function unbanned(userPrivileges: number): number {
  return lowBits(lowBits(userPrivileges) | U.UserPublic | U.UserNormal);
}

/**
 * Privileges a request carries: limit(stored, owner's current privileges), and 0 for an owner without
 * UserNormal (ownerHoldsNothing). A restricted owner (UserNormal without UserPublic) keeps what limit()
 * allows, as in the family.
 */
export function effectivePrivileges(tokenPrivileges: number, userPrivileges: number): number {
  return ownerHoldsNothing(userPrivileges) ? 0 : limit(tokenPrivileges, userPrivileges);
}

/** Every token privilege bit: what limit() leaves of it is everything the owner may hold. */
export const ALL_TOKEN_PRIVILEGES = TOKEN_BITS.reduce((all, { bit }) => all | bit, 0);

/**
 * What a private token of the Ripple family asks for, whatever its row stores (hanayo's sign-in stores 0):
 * every privilege but Bancho, `(Beatmap << 1) − 1` = 8191, as the family's API gives it; limit() then
 * leaves what the owner may hold (Read is never granted).
 */
export const FAMILY_PRIVATE_TOKEN_PRIVILEGES = (TokenPrivilege.Beatmap << 1) - 1;

/**
 * The privileges a token row asks for. A private token of the Ripple family (in place, DATABASE_SCHEMA=ripple:
 * a private row found by the family's MD5 form, such as hanayo's sign-ins; `tokend import-ripple` asks the
 * same of every private row it copies) asks for FAMILY_PRIVATE_TOKEN_PRIVILEGES; then limit() applies as to
 * any token. Every other row asks for what it stores.
 */
export function requestedPrivileges(
  row: { privileges: number; private: number },
  familyToken: boolean,
): number {
  return familyToken && row.private === 1 ? FAMILY_PRIVATE_TOKEN_PRIVILEGES : row.privileges;
}

/**
 * Privileges an OAuth access token carries: its scopes' privileges as effectivePrivileges gives them for
 * the user it acts for (the owner rule of every token), and 0 while the application's owner is banned or
 * restricted (isBanned: an application acts for other people; its owner keeps none working meanwhile).
 */
export function bearerPrivileges(
  scopePrivileges: number,
  userPrivileges: number,
  applicationOwnerPrivileges: number,
): number {
  return isBanned(applicationOwnerPrivileges) ? 0 : effectivePrivileges(scopePrivileges, userPrivileges);
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
