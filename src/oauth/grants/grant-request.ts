// What a grant needs of the token request besides its parameters: the issuer its id_token names, and the
// request as the security log records an act of the client.
import type { Act } from '../../auth/security-log.ts';

export interface GrantRequest {
  /** PUBLIC_URL, or the origin the request reached (src/oauth/endpoints/metadata.ts issuerOf) */
  issuer: string;
  /** the client's act: means oauth, by its client id, from the request's address */
  act: Act;
}
