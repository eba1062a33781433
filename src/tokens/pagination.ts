import { decimalInteger } from '../decimal-integer.ts';
import { firstValue } from '../http/first-value.ts';

/** Tokens per page of a listing (the API's and the token page's): the default and the largest size. */
export const TOKENS_PER_PAGE = 50;
/** Pages past this are empty anyway; the cap keeps the offset a safe integer in every dialect. */
const MAX_PAGE = 2 ** 31;

/** A p or l query value (the first when repeated; spaces around and a sign allowed), or undefined. */
const queryNumber = (raw: unknown): number | undefined => {
  const text = firstValue(raw)?.trim();
  return text === undefined ? undefined : decimalInteger(text, 'any');
};

/** The p/l rule: p < 1 or not a number → 1; l < 1 or not a number → 50; l > 50 → 50. */
export function paginate(p: unknown, l: unknown): { limit: number; offset: number; page: number } {
  const rawPage = queryNumber(p);
  const page = rawPage === undefined || rawPage < 1 ? 1 : Math.min(rawPage, MAX_PAGE);
  const rawSize = queryNumber(l);
  const limit = rawSize === undefined || rawSize < 1 ? TOKENS_PER_PAGE : Math.min(rawSize, TOKENS_PER_PAGE);
  return { limit, offset: (page - 1) * limit, page };
}
