// The one envelope writer: every body is { code, message, ...payload } and the HTTP status equals code.
// pls200 and JSONP are applied afterwards, in onSend (see presentation.ts), so serialisation is unaffected.
import type { FastifyReply } from 'fastify';

export function sendEnvelope(
  reply: FastifyReply,
  code: number,
  message: string,
  payload?: Record<string, unknown>,
): FastifyReply {
  return reply.code(code).send(payload ? { code, message, ...payload } : { code, message });
}

/** JSON-schema of the envelope's base fields, for response schemas. */
export const envelopeProperties = {
  code: { type: 'integer' },
  message: { type: 'string' },
} as const;

export const INTERNAL_ERROR_MESSAGE = 'An internal error occurred. Please try again later.';
