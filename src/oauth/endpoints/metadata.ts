// The server's metadata, one document at two addresses: GET /.well-known/oauth-authorization-server
// (RFC 8414) and GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 §3, every field it
// requires and those it recommends that apply). The issuer is PUBLIC_URL when set; otherwise the origin
// the request reached (honouring TRUST_PROXY for the scheme and host), and then the answer depends on the
// request's Host, so no shared cache may keep it for others.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { serverOrigin } from '../../http/origin.ts';
import { SCOPE_NAMES } from '../scopes.ts';
import { GRANT_TYPES } from './token.ts';
import { CLAIMS_SUPPORTED } from '../oidc.ts';
import { SIGNING_ALG } from '../signing-keys.ts';
import { PROMPT_VALUES } from './authorize-request.ts';

export const issuerOf = (request: FastifyRequest, publicUrl: string | undefined): string =>
  serverOrigin(request, publicUrl);

export function metadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    jwks_uri: `${issuer}/oauth/jwks`,
    device_authorization_endpoint: `${issuer}/oauth/device_authorization`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    scopes_supported: SCOPE_NAMES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: GRANT_TYPES,
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    authorization_response_iss_parameter_supported: true,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    claims_supported: CLAIMS_SUPPORTED,
    claim_types_supported: ['normal'],
    prompt_values_supported: PROMPT_VALUES,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

export function metadataEndpoint(publicUrl: string | undefined) {
  return async function serveMetadata(request: FastifyRequest, reply: FastifyReply) {
    if (publicUrl !== undefined) reply.header('Cache-Control', 'public, max-age=300');
    else
      reply
        .header('Cache-Control', 'private, max-age=300')
        .header('Vary', 'Host, X-Forwarded-Host, X-Forwarded-Proto, Forwarded');
    return reply.send(metadata(issuerOf(request, publicUrl)));
  };
}
