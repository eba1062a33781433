// Makes the API reference's OpenAPI 3.1 document, src/docs/openapi.json, from the route schemas: the app is
// built with the default settings (on an in-memory SQLite database) and every route it declares is told to
// @fastify/swagger (a development dependency: a server never loads this module). Run after changing a
// route or its schema:
//
//   npm run openapi        (node bin/openapi.ts)
//
// test/features/openapi.test.ts fails while the committed file differs from what this makes.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifySchema, type RouteOptions } from 'fastify';
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { envelopeProperties } from '../src/http/envelope.ts';
import { DOCUMENT_FILE, GENERATED_BASE_PATH, serviceDescription } from '../src/docs/plugin.ts';

/** The credential transports, in the order they are looked for. */
const CREDENTIAL_SCHEMES = {
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

/** The reference's section of the server's HTML pages for people (sign-in and sign-out). */
const WEB_PAGES_TAG = 'web pages';

/** The reference's sections, in order. A section no route is in is left out of the document. */
const TAGS = [
  { name: 'tokens', description: 'API tokens' },
  { name: 'users', description: 'Who a credential acts for' },
  { name: 'oauth', description: 'The OAuth 2.0 authorization server' },
  { name: WEB_PAGES_TAG, description: 'Pages for people in a browser (HTML forms, not JSON)' },
  { name: 'operations', description: 'Metrics, health and this reference' },
] as const;

/** The reference's section for a route that names none, by where it lives. */
function sectionOf(url: string, basePath: string): string | undefined {
  if (url === '/login' || url === '/logout') return WEB_PAGES_TAG;
  if (url.startsWith('/oauth/') || url.startsWith('/.well-known/')) return 'oauth';
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
    const underApi = url.startsWith(`${basePath}/v1/`);
    if (underApi) {
      const response = (schema?.response ?? {}) as Record<string, unknown>;
      if (!('default' in response)) extra.response = { ...response, default: errorEnvelope };
    }
    return { schema: { ...schema, ...extra } as FastifySchema, url };
  };
}

const swaggerOptions = (basePath: string, version: string): FastifyDynamicSwaggerOptions => ({
  openapi: {
    openapi: '3.1.0',
    info: { title: 'tokend', version, description: serviceDescription(basePath) },
    components: { securitySchemes: CREDENTIAL_SCHEMES },
    tags: TAGS.map((tag) => ({ ...tag })),
  },
  transform: documentRoute(basePath),
  transformObject: (document) =>
    'openapiObject' in document ? withoutEmptyTags(document.openapiObject) : document.swaggerObject,
});

/** A path item's entry that is an operation (not its `parameters` list, say). */
const isOperation = (entry: unknown): entry is { tags?: string[] } =>
  typeof entry === 'object' && entry !== null && !Array.isArray(entry);

/** The document without the declared sections that no operation is in (they would show empty). */
export function withoutEmptyTags<T extends { paths?: object; tags?: Array<{ name: string }> }>(
  document: T,
): T {
  const used = new Set<string>();
  for (const item of Object.values(document.paths ?? {}) as Array<Record<string, unknown>>)
    for (const entry of Object.values(item ?? {}))
      if (isOperation(entry)) for (const tag of entry.tags ?? []) used.add(tag);
  return { ...document, tags: document.tags?.filter((tag) => used.has(tag.name)) };
}

/** What the reference needs of a route the app declared. */
type DeclaredRoute = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>;

/** Every route the app declares with the default settings; HEAD twins of GET routes are left out. */
async function declaredRoutes(): Promise<DeclaredRoute[]> {
  const routes: DeclaredRoute[] = [];
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: 'sqlite::memory:',
    BASE_PATH: GENERATED_BASE_PATH,
  });
  const app = await buildApp(config, {
    onRoute: (route) => {
      const methods = [route.method].flat().filter((method) => method !== 'HEAD');
      if (methods.length > 0)
        routes.push({ method: methods, url: route.url, schema: route.schema, config: route.config });
    },
  });
  await app.close();
  return routes;
}

/** The service's version, from package.json. */
async function packageVersion(): Promise<string> {
  const { default: pkg } = await import('../package.json', { with: { type: 'json' } });
  return pkg.version;
}

/** The document, as the file holds it (the text a server with the default BASE_PATH serves). */
export async function openApiText(): Promise<string> {
  const [routes, version] = await Promise.all([declaredRoutes(), packageVersion()]);
  const reference = Fastify({ exposeHeadRoutes: false, routerOptions: { ignoreTrailingSlash: true } });
  // The routes are only described here: nothing is validated or serialised with their schemas.
  reference.setValidatorCompiler(() => () => true);
  reference.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await reference.register(swagger, swaggerOptions(GENERATED_BASE_PATH, version));
  const notServedHere = async () => {
    throw new Error('the API reference only describes this route');
  };
  for (const route of routes) reference.route({ ...route, handler: notServedHere });
  await reference.ready();
  const text = `${JSON.stringify(reference.swagger(), null, 2)}\n`;
  await reference.close();
  return text;
}

if (import.meta.main) {
  writeFileSync(DOCUMENT_FILE, await openApiText());
  console.log(`wrote ${fileURLToPath(DOCUMENT_FILE)}`);
}
