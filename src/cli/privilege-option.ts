// `--privileges`: a bit mask as a decimal integer, or privilege names from src/auth/privileges.ts.
import { TokenPrivilege, UserPrivilege } from '../auth/privileges.ts';
import { CliError } from './command.ts';
import { decimalInteger } from '../decimal-integer.ts';

type Table = Readonly<Record<string, number>>;

/**
 * `571`, `UserPublic,UserNormal` and `UserPublic+UserNormal` (names case-insensitive) are all accepted.
 * Names are summed with BigInt-free arithmetic: each bit is distinct, so addition never carries.
 * With `onlyKnownBits`, a number with a bit that no name of the table has is refused.
 */
function parseMask(raw: string, table: Table, what: string, command: string, onlyKnownBits: boolean): number {
  const text = raw.trim();
  const n = decimalInteger(text);
  if (n !== undefined) {
    if (!Number.isSafeInteger(n))
      throw new CliError(`--privileges: ${text} is larger than ${Number.MAX_SAFE_INTEGER}`, command);
    if (onlyKnownBits) refuseUnknownBits(n, table, what, command);
    return n;
  }
  const byLowerName = new Map(Object.entries(table).map(([name, bit]) => [name.toLowerCase(), bit]));
  const parts = text.split(/[,+|]/).map((s) => s.trim());
  let mask = 0;
  const seen = new Set<number>();
  for (const part of parts) {
    const bit = byLowerName.get(part.toLowerCase());
    if (bit === undefined)
      throw new CliError(
        `--privileges: expected an integer or ${what} privilege names (e.g. ${Object.keys(table).slice(0, 2).join(',')}), got ${JSON.stringify(raw)}`,
        command,
      );
    if (!seen.has(bit)) mask += bit;
    seen.add(bit);
  }
  return mask;
}

/** Bits above 2^31 included: BigInt, since the numbers go up to 2^53. */
function refuseUnknownBits(mask: number, table: Table, what: string, command: string): void {
  const entries = Object.entries(table);
  const known = entries.reduce((sum, [, bit]) => sum | BigInt(bit), 0n);
  const unknown = BigInt(mask) & ~known;
  if (unknown === 0n) return;
  const bits: bigint[] = [];
  for (let bit = 1n; bit <= unknown; bit <<= 1n) if ((unknown & bit) !== 0n) bits.push(bit);
  const which =
    bits.length === 1 ? `the bit ${bits[0]}, which is` : `the bits ${bits.join(' + ')}, which are`;
  const [first, last] = [entries[0], entries[entries.length - 1]];
  throw new CliError(
    `--privileges: ${mask} has ${which} no ${what} privilege; ${what} privileges are the bits ` +
      `${first?.[1]} (${first?.[0]}) to ${last?.[1]} (${last?.[0]}), ${known} for all of them, ` +
      `or names such as ${entries
        .slice(0, 2)
        .map(([name]) => name)
        .join(',')}`,
    command,
  );
}

/** User privileges: names, or a number made only of the bits of UserPrivilege. */
export const parseUserPrivileges = (raw: string, command: string): number =>
  parseMask(raw, UserPrivilege, 'user', command, true);

/** Token privileges: names, or any number (limit() drops the bits no token privilege has). */
export const parseTokenPrivileges = (raw: string, command: string): number =>
  parseMask(raw, TokenPrivilege, 'token', command, false);
