// GET /v1/ping: who the request acts for, with effective and user privileges.
import type { FastifyInstance } from 'fastify';
import { envelopeProperties, sendEnvelope } from '../http/envelope.ts';
import { identityOf } from '../http/plugin.ts';
import { tokenPrivilegeNames, userPrivilegeNames } from '../privileges.ts';

const pingSchema = {
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

export async function pingRoutes(app: FastifyInstance): Promise<void> {
  app.get('/ping', { schema: pingSchema, config: { identify: true } }, async (request, reply) => {
    const identity = identityOf(request);
    const known = identity.kind !== 'none';
    const privileges = known ? identity.privileges : 0;
    const userPrivileges = known ? identity.userPrivileges : 0;
    return sendEnvelope(reply, 200, 'Surprisingly, everything is up and running!', {
      user_id: known ? identity.userId : 0,
      privileges,
      privileges_string: tokenPrivilegeNames(privileges).join(', '),
      user_privileges: userPrivileges,
      user_privileges_string: userPrivilegeNames(userPrivileges).join(', '),
    });
  });
}
