// The creation form's expiry: the choices of its list, the dates its custom expiry may take, and the
// expiry a form asks for.
import { MAX_EXPIRES_IN_S } from '../expiry.ts';
import { integerInRange } from '../../decimal-integer.ts';
import { utcDate } from '../../utc-time.ts';
import { expiryLabel } from '../../web/relative-time.ts';
import type { ExpiryInput } from './create-form-view.ts';

const DAY = 86_400;
/**
 * The expiry choices of the form, named by the rule the list uses ("In 1 month" is listed "in 1 month").
 * Made when a page is rendered, not at start-up: the first date formatter loads ICU's locale data (idle
 * memory that serving the API never needs).
 */
export const expiryChoices = (): ReadonlyArray<{ value: string; label: string }> => [
  { value: '', label: 'Never' },
  ...[DAY, 7 * DAY, 30 * DAY, 90 * DAY, 365 * DAY].map((s) => ({ value: String(s), label: expiryLabel(s) })),
];

/**
 * The dates the custom expiry may take: from today to the last day whose end is within MAX_EXPIRES_IN_S (a
 * custom date expires at the end of that day, UTC), the longest expiry a token may be given.
 */
export function customDateRange(now: number): { min: string; max: string } {
  const latestEnd = now + MAX_EXPIRES_IN_S;
  return { min: utcDate(now), max: utcDate(latestEnd - DAY) };
}

/**
 * The expiry a creation form asks for, in Unix seconds: undefined for never; an error when the choice is
 * not one of the list, or the date is not one of `customDateRange`.
 */
export function formExpiry(
  input: ExpiryInput,
  now: number,
): { expiresAt: number | undefined } | { error: string } {
  if (input.choice === '') return { expiresAt: undefined };
  if (input.choice === 'custom') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(input.date);
    const day = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
    if (!m || Number.isNaN(day) || utcDate(day / 1000) !== input.date)
      return { error: 'Choose the date the token expires on (for example 2030-12-31).' };
    const expiresAt = day / 1000 + DAY; // the end of that day
    if (expiresAt <= now) return { error: 'Choose a date from today on: that one has passed.' };
    if (expiresAt - now > MAX_EXPIRES_IN_S)
      return { error: `Choose a date up to ${customDateRange(now).max}: a token expires within ten years.` };
    return { expiresAt };
  }
  const seconds = integerInRange(input.choice, 1, MAX_EXPIRES_IN_S);
  return seconds === undefined ? { error: 'Choose when the token expires.' } : { expiresAt: now + seconds };
}
