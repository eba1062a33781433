// The signed-in user's own application on the "Your applications" pages: a route hook that loads the one
// the path's client id names (any other id, another user's included, is answered as unknown before the
// handler runs), and the reader of what it loaded.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { signedInUser } from '../../web/hooks.ts';
import { findOwnedClient, isConfidential, type OAuthClient } from '../clients.ts';
import { consentCounts } from '../repository.ts';
import {
  applicationsMessage,
  sendApplicationsPage,
  type ApplicationSummary,
} from './applications-page-view.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the signed-in user's own application the path names (`loadOwnApplication`) */
    ownApplication: { client: OAuthClient; application: ApplicationSummary } | null;
  }
}

export const summaryOf = (client: OAuthClient, authorizedUsers: number): ApplicationSummary => ({
  id: client.id,
  name: client.name,
  avatar: client.avatar,
  redirectUris: client.redirectUris,
  confidential: isConfidential(client),
  authorizedUsers,
  created: client.created,
});

/** The answer to an application id the user has no application of. */
export const notFound = (reply: FastifyReply) =>
  sendApplicationsPage(
    reply,
    404,
    'Not found',
    applicationsMessage('No such application', 'You have no application with that client id.'),
  );

/**
 * Loads the signed-in user's application the path's client id names, with its users counted (only a
 * confidential one with `confidential`); any other id is answered as unknown, and the handler does not run.
 */
export function loadOwnApplication(options: { confidential?: boolean } = {}): preHandlerAsyncHookHandler {
  return async function loadOwnApplication(request, reply) {
    const { client: id } = request.params as { client: string };
    const { db } = request.server.web;
    const client = await findOwnedClient(db, signedInUser(request).userId, id);
    if (!client || (options.confidential && !isConfidential(client))) return notFound(reply);
    const counts = await consentCounts(db, [client.id]);
    request.ownApplication = { client, application: summaryOf(client, counts.get(client.id) ?? 0) };
  };
}

/** The application `loadOwnApplication` found for this request. */
export function ownApplication(request: FastifyRequest): {
  client: OAuthClient;
  application: ApplicationSummary;
} {
  if (request.ownApplication === null) throw new Error('an application page without loadOwnApplication');
  return request.ownApplication;
}
