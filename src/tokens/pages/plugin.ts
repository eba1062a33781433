// The token page at /tokens and its actions, registered in the context of the pages (app.ts, beside the
// page kit of src/web/): list (list.ts), create (create.ts), revoke and regenerate a token
// (token-actions.ts), revoke an application's access (connected-applications.ts), sign out everywhere
// (sign-out-everywhere.ts). Forms are CSRF-protected; everything works without JavaScript.
import type { FastifyInstance } from 'fastify';
import { createRoute } from './create.ts';
import { listRoute, tokensPageShower } from './list.ts';
import { tokenActionRoutes } from './token-actions.ts';
import { connectedApplicationRoutes } from './connected-applications.ts';
import { signOutEverywhereRoutes } from './sign-out-everywhere.ts';

export interface TokensPagesOptions {
  /** the address of the API reference page, which the page links to */
  apiReference: string;
}

export async function tokensPages(app: FastifyInstance, options: TokensPagesOptions): Promise<void> {
  const showTokens = tokensPageShower(app, options.apiReference);
  await listRoute(app, showTokens);
  await createRoute(app, showTokens);
  await tokenActionRoutes(app);
  await connectedApplicationRoutes(app);
  await signOutEverywhereRoutes(app);
}
