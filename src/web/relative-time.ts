// The one rule for relative times on the pages ("3 minutes ago", "in 1 month"). The server writes every
// such time; no page script writes one. The token form's expiry choices are named by the same rule, so a
// token made to expire "in 1 month" is listed as expiring "in 1 month", not "in 4 weeks", seconds later.

export type TimeUnit = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

/**
 * A duration (seconds, at least a minute) as a whole number of one unit, rounded to the nearest. A unit
 * is used until the next one's rounded count reaches 1: 59 min 40 s is 1 hour, 29 days 23 hours is
 * 1 month (30 days), 6 days 13 hours is 1 week, 345 days is 1 year. A month is 30 days, a year 365.
 */
export function measure(seconds: number): { count: number; unit: TimeUnit } {
  const minutes = Math.round(seconds / MINUTE);
  if (minutes < 60) return { count: minutes, unit: 'minute' };
  const hours = Math.round(seconds / HOUR);
  if (hours < 24) return { count: hours, unit: 'hour' };
  const days = Math.round(seconds / DAY);
  if (days < 7) return { count: days, unit: 'day' };
  if (days < 30) return { count: Math.round(days / 7), unit: 'week' };
  const months = Math.round(days / 30);
  if (months < 12) return { count: months, unit: 'month' };
  return { count: Math.round(days / 365), unit: 'year' };
}

// Made on first use: the formatter loads ICU's locale data (memory), which serving the API never needs.
let relative: Intl.RelativeTimeFormat | undefined;

/** "3 minutes ago", "in 2 days", "just now", "in less than a minute" (times in seconds). */
export function timeFromNow(at: number, now: number): string {
  const delta = at - now;
  const size = Math.abs(delta);
  if (size < MINUTE) return delta <= 0 ? 'just now' : 'in less than a minute';
  const { count, unit } = measure(size);
  relative ??= new Intl.RelativeTimeFormat('en', { numeric: 'always' });
  return relative.format(delta < 0 ? -count : count, unit);
}

/** The label of an expiry choice `seconds` from now: "In 1 day", "In 1 month"… */
export function expiryLabel(seconds: number): string {
  const text = timeFromNow(seconds, 0);
  return text.charAt(0).toUpperCase() + text.slice(1);
}
