// The one way tokend writes a time (Unix seconds) as text, always in UTC: the API's RFC 3339 form, the
// pages' machine-readable times, the CLI's tables and the dates of forms.

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** `2026-11-26T05:00:00Z`: RFC 3339 in UTC, in whole seconds (toISOString's milliseconds left out). */
export const isoTime = (seconds: number): string => iso(seconds).replace(/\.\d{3}Z$/, 'Z');

/** `2026-11-26 05:00:00`: the same time for people reading a table (the CLI's), still UTC. */
export const plainTime = (seconds: number): string => iso(seconds).slice(0, 19).replace('T', ' ');

/** `2026-11-26`: the day (UTC). */
export const utcDate = (seconds: number): string => iso(seconds).slice(0, 10);
