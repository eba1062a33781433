// GET /v1/ping: who the request acts for, with effective and user privileges (user 0: nobody).
import { NO_IDENTITY } from '../auth/identity.ts';
import type { FastifyInstance } from 'fastify';
import { sendEnvelope } from '../http/envelope.ts';
import { tokenPrivilegeNames, userPrivilegeNames } from '../auth/privileges.ts';
import { pingSchema } from './schemas.ts';

export async function pingRoutes(app: FastifyInstance): Promise<void> {
  app.get('/ping', { schema: pingSchema, config: { identify: true } }, async (request, reply) => {
    const identity = request.identity ?? NO_IDENTITY;
    // An application's own token (client credentials) acts for no user: user 0, no privileges, as no credential.
    const known = identity.kind !== 'none' && identity.kind !== 'client';
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
