// Text parameters: PostgreSQL refuses a NUL character in one (the query fails), and no column tokend
// reads by a text key holds NUL or anything longer than the column. A lookup by such a value can match
// no row, so it is answered without sending it to SQL.

/** Whether every backend can take `value` as text: PostgreSQL refuses NUL in a text parameter or column. */
export const storableText = (value: string): boolean => !value.includes('\0');

/** Whether `value` can match a row of a text column at most `maxLength` long (none: any length). */
export const canMatchText = (value: string, maxLength = Infinity): boolean =>
  value.length <= maxLength && storableText(value);
