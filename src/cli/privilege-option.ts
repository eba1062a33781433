// `--privileges`: a bit mask as a decimal integer, or privilege names from src/privileges.ts.
import { TokenPrivilege, UserPrivilege } from '../privileges.ts';
import { CliError } from './command.ts';

type Table = Readonly<Record<string, number>>;

/**
 * `571`, `UserPublic,UserNormal` and `UserPublic+UserNormal` (names case-insensitive) are all accepted.
 * Names are summed with BigInt-free arithmetic: each bit is distinct, so addition never carries.
 */
function parseMask(raw: string, table: Table, what: string, command: string): number {
  const text = raw.trim();
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (!Number.isSafeInteger(n))
      throw new CliError(`--privileges: ${text} is larger than ${Number.MAX_SAFE_INTEGER}`, command);
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

export const parseUserPrivileges = (raw: string, command: string): number =>
  parseMask(raw, UserPrivilege, 'user', command);

export const parseTokenPrivileges = (raw: string, command: string): number =>
  parseMask(raw, TokenPrivilege, 'token', command);
