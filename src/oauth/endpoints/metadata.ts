// GET /.well-known/oauth-authorization-server (RFC 8414). The issuer is the origin the request reached
// (honouring TRUST_PROXY for the scheme and host), so links work behind a reverse proxy.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SCOPE_NAMES } from '../scopes.ts';
import { GRANT_TYPES } from './token.ts';

export const issuerOf = (request: FastifyRequest): string => `${request.protocol}://${request.host}`;

export function metadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
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
  };
}

export async function metadataEndpoint(request: FastifyRequest, reply: FastifyReply) {
  return reply.header('Cache-Control', 'public, max-age=300').send(metadata(issuerOf(request)));
}
