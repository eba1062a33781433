// Request parameters of the OAuth endpoints: every value a single string (RFC 6749 §3.1: parameters
// must not be repeated; one sent without a value counts as omitted).
import type { FastifyRequest } from 'fastify';
import { InvalidRequest } from './errors.ts';

export type Params = Readonly<Record<string, string | undefined>>;

/** One parameter's value: undefined when omitted or empty; a repeated or non-text value is refused. */
function singleValue(name: string, value: unknown): string | undefined {
  if (Array.isArray(value)) throw new InvalidRequest(`The ${name} parameter was given more than once.`);
  if (value !== undefined && typeof value !== 'string')
    throw new InvalidRequest(`The ${name} parameter must be a string.`);
  return value === '' ? undefined : value;
}

/** Every parameter of a query or form, each by the rule above. */
export function singleValued(source: unknown): Params {
  if (source === undefined || source === null) return {};
  if (typeof source !== 'object' || Array.isArray(source)) throw new InvalidRequest('Malformed parameters.');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    const single = singleValue(name, value);
    if (single !== undefined) out[name] = single;
  }
  return out;
}

/**
 * One parameter of a query or form, by the same rule, before the others are read (the authorization
 * request's client and redirect URI, checked first).
 */
export function singleParam(source: unknown, name: string): string | undefined {
  const value: unknown =
    typeof source === 'object' && source !== null && Object.hasOwn(source, name)
      ? Reflect.get(source, name)
      : undefined;
  return singleValue(name, value);
}

/** The form body of a back-channel request; any other encoding is refused (RFC 6749 §3.2). */
export function formParams(request: FastifyRequest): Params {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type))
    throw new InvalidRequest('Send the parameters as application/x-www-form-urlencoded.');
  return singleValued(request.body);
}

export function required(params: Params, name: string): string {
  const value = params[name];
  if (value === undefined) throw new InvalidRequest(`The ${name} parameter is required.`);
  return value;
}
