// grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4–3.5): the device polls with its
// device code. In order: unknown → invalid_grant; another client's → invalid_grant; already exchanged →
// invalid_grant (a device code yields tokens once); expired → expired_token; polled before its interval →
// slow_down (the interval grows by 5 s); still waiting → authorization_pending; denied → access_denied.
// An approved code is then counted by the token endpoint's limits for its user (as a proven code is),
// and starts a grant like a code exchange: bounded the same way, refreshed and revoked the same way, with
// an id_token when `openid` was granted (auth_time: when the approving user signed in; no nonce).
import { hasExpired } from '../../auth/live.ts';
import { isBanned } from '../../auth/privileges.ts';
import { recordEvent } from '../../auth/security-log.ts';
import { findUserById } from '../../users/repository.ts';
import type { OAuthClient } from '../clients.ts';
import type { TokenEndpointDeps } from '../deps.ts';
import { DEVICE_GRANT_TYPE, claimDeviceCode, findDeviceCode, recordPoll } from '../device.ts';
import { AccessDenied, AuthorizationPending, ExpiredToken, InvalidGrant, PollingTooFast } from '../errors.ts';
import { startGrant, type TokenResponse } from '../issue.ts';
import { readyToSign, withIdToken } from '../oidc.ts';
import { required, type Params } from '../params.ts';
import { sha256Hex } from '../secrets.ts';
import type { GrantRequest } from './grant-request.ts';

export const grantType = DEVICE_GRANT_TYPE;

const USED = 'The device code was already used: it yields tokens once.';

export async function handle(
  deps: TokenEndpointDeps,
  client: OAuthClient,
  params: Params,
  request: GrantRequest,
): Promise<TokenResponse> {
  const hash = sha256Hex(required(params, 'device_code'));
  const now = deps.now();
  const row = await findDeviceCode(deps.db, hash);
  if (!row) throw new InvalidGrant('The device code is invalid.');
  if (row.client_id !== client.id) throw new InvalidGrant('The device code was issued to another client.');
  if (row.status === 'used') throw new InvalidGrant(USED);
  if (hasExpired(row.expires_at, now))
    throw new ExpiredToken('The device code has expired: start the sign-in again.');
  const interval = await recordPoll(deps.db, hash, now);
  if (interval !== undefined)
    throw new PollingTooFast(`Polling too fast: wait ${interval} seconds between requests.`, interval);
  if (row.status === 'pending')
    throw new AuthorizationPending('The user has not approved or denied the request yet.');
  if (row.status === 'denied') throw new AccessDenied('The user denied the request.');
  // An approved code holds the user who approved it (approveDeviceCode).
  const userId = row.user_id!;
  // Proven: an approved code of this client acts for its user, and from here on it is counted.
  await deps.limits.admit(client.id, userId);
  const user = await findUserById(deps.db, userId);
  if (!user || isBanned(user.privileges)) throw new InvalidGrant('The account of this sign-in is banned.');

  const authTime = row.auth_time;
  const grant = { clientId: client.id, userId, scope: row.scope, family: hash, authTime };
  await readyToSign(deps.keys, row.scope);
  const issued = await deps.db.transaction().execute(async (trx) => {
    const response = await startGrant(trx, (db) => claimDeviceCode(db, hash), grant, now, deps.grants);
    if (response)
      await recordEvent(trx, request.act, {
        userId,
        kind: 'device.signed_in',
        clientId: client.id,
        detail: row.scope,
      });
    return response;
  });
  if (!issued) throw new InvalidGrant(USED);
  return withIdToken(deps.db, deps.keys, issued, {
    issuer: request.issuer,
    clientId: client.id,
    userId,
    authTime,
    nonce: null,
    now,
  });
}
