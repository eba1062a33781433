// tokend audit: the security log (src/auth/security-log.ts) for operators, newest first, as a table or
// as JSON lines to ship elsewhere (the columns are docs/security-log.md's).
import { EVENT_KINDS, isEventKind, listEvents } from '../../auth/security-log.ts';
import { decimalInteger } from '../../decimal-integer.ts';
import { CliError, type LeafCommand } from '../command.ts';
import { table } from '../format.ts';
import { findUserOrFail } from '../lookup.ts';
import { plainTime } from '../../utc-time.ts';

/** Most events one run prints, unless --limit says otherwise. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1_000_000;

/** --since: Unix seconds, or an ISO 8601 date or date and time (UTC unless it names a zone). */
export function parseSince(raw: string): number | undefined {
  const text = raw.trim();
  const seconds = decimalInteger(text, 'plus');
  if (seconds !== undefined) return seconds;
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text))
    return undefined;
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(text) || text.length === 10 ? text : `${text}Z`;
  const ms = Date.parse(zoned.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

export const auditCommand: LeafCommand = {
  name: 'audit',
  summary: 'Print the security log, newest first (sign-ins, tokens made and revoked, …; never secrets)',
  description:
    'Each event: its time, the user, its kind, by which means (api, web, oauth, cli, import, expiry),\n' +
    'what acted (a token, session or application id) and whose it was when another user acted (by user N),\n' +
    'the token or application it is about, a detail (×N: failed sign-ins counted in one row),\n' +
    'the client address and a shortened user agent. --json prints one JSON object a line (JSON lines).\n' +
    `Kinds: ${Object.keys(EVENT_KINDS).join(', ')}.`,
  examples: [
    'tokend audit --user alice',
    'tokend audit --since 2026-11-01 --kind signin.failed --json',
    'tokend audit --since 1795000000 --limit 1000',
  ],
  options: {
    user: { type: 'string', value: 'U', description: "only this user's events (a user id or a username)" },
    since: {
      type: 'string',
      value: 'T',
      description: 'only events at or after T: an ISO date or date-time (UTC unless zoned), or Unix seconds',
    },
    kind: { type: 'string', value: 'K', description: 'only events of this kind (e.g. token.revoked)' },
    limit: { type: 'string', value: 'N', description: `at most N events (default ${DEFAULT_LIMIT})` },
  },
  async run(args, ctx) {
    const kind = args.optionalString('kind');
    if (kind !== undefined && !isEventKind(kind))
      throw new CliError(
        `--kind: no event kind ${JSON.stringify(kind)}; the kinds are ${Object.keys(EVENT_KINDS).join(', ')}`,
        args.command,
      );
    const sinceRaw = args.optionalString('since');
    const since = sinceRaw === undefined ? undefined : parseSince(sinceRaw);
    if (sinceRaw !== undefined && since === undefined)
      throw new CliError(
        `--since: expected an ISO date (2026-11-01, 2026-11-01T12:00:00Z) or Unix seconds, got ${JSON.stringify(sinceRaw)}`,
        args.command,
      );
    const limit = args.optionalInteger('limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
    const store = await ctx.store();
    const userRef = args.optionalString('user');
    const user = userRef === undefined ? undefined : await findUserOrFail(store, userRef);
    const events = await listEvents(store.db, {
      ...(user ? { userId: user.id } : {}),
      ...(kind !== undefined && isEventKind(kind) ? { kind } : {}),
      ...(since !== undefined ? { since } : {}),
      limit,
    });
    const text =
      events.length === 0
        ? 'No events.'
        : table(
            ctx.style,
            [
              'TIME (UTC)',
              'USER',
              'KIND',
              'MEANS',
              'TOKEN',
              'APPLICATION',
              'ADDRESS',
              'DETAIL',
              'USER AGENT',
            ],
            events.map((e) => [
              plainTime(e.at),
              String(e.user_id),
              e.kind,
              [
                e.means,
                e.means_id,
                e.actor_id !== null && e.actor_id !== e.user_id ? `by user ${e.actor_id}` : null,
              ]
                .filter((part) => part !== null)
                .join(' '),
              e.token_id === null ? '' : String(e.token_id),
              e.client_id ?? '',
              e.address ?? '',
              e.repeats === null ? (e.detail ?? '') : `${e.detail ?? ''} ×${e.repeats}`,
              e.user_agent ?? '',
            ]),
          );
    return { json: { events }, jsonLines: events as unknown as Array<Record<string, unknown>>, text };
  },
};
