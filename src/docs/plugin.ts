// The API reference: an OpenAPI 3.1 document generated from the route schemas (@fastify/swagger), served at
// {base_url}/v1/openapi.json, and an interactive page at {base_url}/docs (@fastify/swagger-ui).
// Registered before every route: the document collects routes as they are added.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { envelopeProperties } from '../http/envelope.ts';
import { useDocumentHeaders } from '../http/security-headers.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** The credentials of decisions.md, in the order they are looked for. */
export const CREDENTIAL_SCHEMES = {
  rippleToken: { type: 'apiKey', in: 'header', name: 'X-Ripple-Token', description: 'An API token.' },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An OAuth access token, or an API token.',
  },
  queryToken: { type: 'apiKey', in: 'query', name: 'token', description: 'An API token.' },
  queryK: { type: 'apiKey', in: 'query', name: 'k', description: 'An API token.' },
  cookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'rt',
    description: 'The web login cookie (never for JSONP requests).',
  },
} as const;

const CREDENTIALS = Object.keys(CREDENTIAL_SCHEMES).map((name) => ({ [name]: [] as string[] }));

const errorEnvelope = {
  description: 'An error: `code` equals the HTTP status (unless `pls200` is given) and `message` explains.',
  type: 'object',
  properties: envelopeProperties,
  required: ['code', 'message'],
} as const;

/** The path of the document, under the API's base path. */
export const openApiPath = (basePath: string): string => `${basePath}/v1/openapi.json`;
export const docsPath = (basePath: string): string => `${basePath}/docs`;

/** The reference's section for a route that names none, by where it lives. */
function sectionOf(url: string, basePath: string): string | undefined {
  if (url.startsWith('/oauth/') || url.startsWith('/.well-known/')) return 'oauth';
  if (url === '/login' || url === '/logout') return 'web';
  if (url.startsWith('/health') || url === '/metrics') return 'operations';
  if (url === `${basePath}/v1/ping`) return 'users';
  return undefined;
}

/** Adds what every route of a kind shares: credentials for routes that identify, the error envelope for the API. */
function documentRoute(basePath: string) {
  return ({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) => {
    const extra: Record<string, unknown> = {};
    const section = sectionOf(url, basePath);
    if (section && !('tags' in (schema ?? {}))) extra.tags = [section];
    if (route.config?.identify && !('security' in (schema ?? {}))) extra.security = CREDENTIALS;
    const underApi = url.startsWith(`${basePath}/`);
    if (underApi) {
      const response = (schema?.response ?? {}) as Record<string, unknown>;
      if (!('default' in response)) extra.response = { ...response, default: errorEnvelope };
    }
    return { schema: { ...schema, ...extra } as FastifySchema, url };
  };
}

export async function registerDocs(app: FastifyInstance, basePath: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'tokend',
        version,
        description:
          'The token part of the v1 user-account API. Every JSON body carries `code` and `message`; ' +
          '`pls200` forces HTTP 200 and a `callback` query parameter answers JSONP.',
      },
      components: { securitySchemes: CREDENTIAL_SCHEMES },
      tags: [
        { name: 'tokens', description: 'API tokens' },
        { name: 'users', description: 'Who a credential acts for' },
        { name: 'oauth', description: 'The OAuth 2.0 authorization server' },
        { name: 'web', description: 'The sign-in pages (HTML)' },
        { name: 'operations', description: 'Metrics, health and this reference' },
      ],
    },
    transform: documentRoute(basePath),
  });

  app.get(
    openApiPath(basePath),
    {
      schema: {
        tags: ['operations'],
        summary: 'This OpenAPI 3.1 document',
        response: {
          200: { description: 'The OpenAPI document', type: 'object', additionalProperties: true },
        },
      },
    },
    async () => app.swagger(),
  );

  // The reference page is a document: helmet's headers, in a context of its own.
  await app.register(async (page) => {
    useDocumentHeaders(page);
    await page.register(swaggerUi, {
      routePrefix: docsPath(basePath),
      uiConfig: { deepLinking: true, docExpansion: 'list' },
    });
  });
}
