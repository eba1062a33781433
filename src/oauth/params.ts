// Request parameters of the OAuth endpoints: every value a single string (RFC 6749 §3.1: parameters
// must not be repeated; one sent without a value counts as omitted).
import type { FastifyRequest } from 'fastify';
import { InvalidRequest } from './errors.ts';

export type Params = Readonly<Record<string, string | undefined>>;

export function singleValued(source: unknown): Params {
  if (source === undefined || source === null) return {};
  if (typeof source !== 'object' || Array.isArray(source)) throw new InvalidRequest('Malformed parameters.');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (Array.isArray(value)) throw new InvalidRequest(`The ${name} parameter was given more than once.`);
    if (typeof value !== 'string') throw new InvalidRequest(`The ${name} parameter must be a string.`);
    if (value !== '') out[name] = value;
  }
  return out;
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
