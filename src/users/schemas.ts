// The JSON schema of GET /v1/ping (ping-route.ts): what Fastify serialises and the API reference documents.
import { envelopeProperties } from '../http/envelope.ts';

export const pingSchema = {
  response: {
    200: {
      type: 'object',
      properties: {
        ...envelopeProperties,
        user_id: { type: 'integer' },
        privileges: { type: 'integer' },
        privileges_string: { type: 'string', description: 'The names of `privileges`, joined by ", ".' },
        user_privileges: { type: 'integer' },
        user_privileges_string: {
          type: 'string',
          description: 'The names of `user_privileges`, joined by ", ".',
        },
      },
    },
  },
} as const;
