// How the API writes a token's `last_updated`: Unix seconds, as the spec has it (the default), or, with
// RIPPLE_TIME_FORMAT=rfc3339, an RFC 3339 string in UTC (`2026-11-26T05:00:00Z`) for a frontend that
// reads a string there (hanayo's /dev/tokens page). Only the answers change; what is stored is seconds.
import type { TimeFormat } from '../config.ts';
import { isoTime } from '../utc-time.ts';

/** `seconds` (Unix time, a whole number) as the API writes it in `format`. */
export function presentTime(seconds: number, format: TimeFormat): number | string {
  return format === 'unix' ? seconds : isoTime(seconds);
}
