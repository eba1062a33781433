// POST /oauth/device_authorization (RFC 8628 §3.1–3.2): a device asks to sign a user in. The client
// authenticates as at the token endpoint (a confidential one with its secret, a public one by client_id);
// the scope is read as an authorization request's (OpenID Connect's scopes without data left out). The
// answer: the device code (for the device's polls), the user code the person types at verification_uri
// (/device), the same with the code filled in, and how long and how often to poll.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientAddress } from '../../http/client-address.ts';
import { authenticateClient } from '../client-auth.ts';
import { APPLICATION_SUSPENDED } from '../clients.ts';
import type { OAuthDeps } from '../deps.ts';
import type { DeviceLimits } from '../device-limits.ts';
import {
  DEVICE_CODE_TTL_S,
  DEVICE_POLL_INTERVAL_S,
  PENDING_DEVICE_CODES_PER_CLIENT_MAX,
  countPendingDeviceCodes,
  startDeviceAuthorization,
} from '../device.ts';
import { SlowDown, UnauthorizedClient } from '../errors.ts';
import { formParams } from '../params.ts';
import { ownerIsBanned } from '../repository.ts';
import { noStore } from '../respond.ts';
import { formatScope, parseScope } from '../scopes.ts';
import { issuerOf } from './metadata.ts';

export function deviceAuthorizationEndpoint(deps: OAuthDeps & { deviceLimits: DeviceLimits }) {
  return async function deviceAuthorization(request: FastifyRequest, reply: FastifyReply) {
    const params = formParams(request);
    const { client } = await authenticateClient(deps.db, request, params);
    if (await ownerIsBanned(deps.db, client.ownerId)) throw new UnauthorizedClient(APPLICATION_SUSPENDED);
    const scope = formatScope(parseScope(params.scope, { grantable: true }));
    await deps.deviceLimits.admitStart(clientAddress(request));
    const now = deps.now();
    if ((await countPendingDeviceCodes(deps.db, client.id, now)) >= PENDING_DEVICE_CODES_PER_CLIENT_MAX)
      throw new SlowDown(
        'Too many device sign-ins of this application are waiting for their users; retry in a minute.',
        60,
      );
    const { deviceCode, userCode } = await startDeviceAuthorization(deps.db, client.id, scope, now);
    const verificationUri = `${issuerOf(request, deps.publicUrl)}/device`;
    return noStore(reply).send({
      device_code: deviceCode,
      user_code: userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
      expires_in: DEVICE_CODE_TTL_S,
      interval: DEVICE_POLL_INTERVAL_S,
    });
  };
}
