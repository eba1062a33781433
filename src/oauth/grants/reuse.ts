// What presenting a used code or a rotated refresh token again does, for both grants: the whole grant
// ends (it may have leaked), recorded and published as `grant.revoked` by the client that presented it.
import type { TokenEndpointDeps } from '../deps.ts';
import { revokeGrant } from '../repository.ts';
import { actOutsideRequest } from '../../auth/security-log.ts';

export async function endReusedGrant(
  deps: TokenEndpointDeps,
  grant: { family: string; userId: number; clientId: string },
  presented: 'code' | 'refresh token',
): Promise<void> {
  const act = { ...actOutsideRequest('oauth', deps.now(), deps.events), by: grant.clientId };
  await revokeGrant(deps.db, grant, act, `${presented} presented again`);
}
