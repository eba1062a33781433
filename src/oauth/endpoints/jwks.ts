// GET /oauth/jwks: the public keys that verify tokend's id_tokens (RFC 7517 JWK Set): the current key, a
// rotated key before it signs, and retired keys until the id_tokens they signed have expired
// (src/oauth/signing-keys.ts). Caches may keep it JWKS_MAX_AGE_S: a new key is published longer than that
// before it signs.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JWKS_MAX_AGE_S, type SigningKeys } from '../signing-keys.ts';

export function jwksEndpoint(keys: SigningKeys) {
  return async function serveJwks(_request: FastifyRequest, reply: FastifyReply) {
    const set = await keys.jwks();
    return reply
      .header('Cache-Control', `public, max-age=${JWKS_MAX_AGE_S}`)
      .type('application/jwk-set+json')
      .send(set);
  };
}
