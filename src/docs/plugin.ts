// The API reference: an OpenAPI 3.1 document generated from the route schemas (@fastify/swagger), served at
// {base_url}/v1/openapi.json, and an interactive page at {base_url}/docs (@fastify/swagger-ui) with tokend's
// title and icon, whose top bar loads that document. Sections without operations are left out.
//
// Both are built on their first request, in a Fastify instance of their own that is told every route the
// app declared (collected here as they are added, so this is registered before every route). Until then
// neither library is loaded, nor the icon and version they show: registered on the app itself, as their
// READMEs show, the two plugins and what they bring (yaml, @fastify/static, send, glob, mime, …) held
// memory in an idle server (bench/HISTORY.md).
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { envelopeProperties } from '../http/envelope.ts';
import { useDocumentHeaders } from '../http/security-headers.ts';
import { BROWSER_HOME } from '../http/errors.ts';

/** The credential transports, in the order they are looked for. */
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

/** The reference's section of the server's HTML pages for people (sign-in and sign-out). */
export const WEB_PAGES_TAG = 'web pages';

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
    info: {
      title: 'tokend',
      version,
      description:
        'tokend, the token service: API tokens under `' +
        `${basePath}/v1` +
        '`, an OAuth 2.0 authorization server, and the sign-in pages. Every JSON body of the v1 API ' +
        'carries `code` and `message`; `pls200` forces HTTP 200 and a `callback` query parameter answers JSONP. ' +
        `Make, regenerate and revoke your API tokens on [your token page](${BROWSER_HOME}).`,
    },
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

/** The top bar's logo: the pages' icon and the name, white on the bar's dark grey. */
const logoSvg = (icon: string): string =>
  '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="40" viewBox="0 0 150 40">' +
  icon.replace('<svg ', '<svg x="4" y="4" ') +
  '<text x="46" y="28" fill="#fff" font-family="system-ui,sans-serif" font-size="24" font-weight="600">' +
  'tokend</text></svg>';

/** The service's version, from package.json. */
const readVersion = (): string =>
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;

/** What the reference needs of a route the app declared. */
type DeclaredRoute = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>;

const isHidden = (schema: FastifySchema | undefined): boolean =>
  (schema as { hide?: unknown } | undefined)?.hide === true;

/** The reference's own Fastify instance: the declared routes (described, never served) and the page. */
async function buildReference(routes: DeclaredRoute[], basePath: string): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }, { FAVICON_SVG }] =
    await Promise.all([
      import('fastify'),
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
      import('../web/theme.ts'),
    ]);
  const reference = Fastify({ exposeHeadRoutes: false, routerOptions: { ignoreTrailingSlash: true } });
  // The routes are only described here: nothing is validated or serialised with their schemas.
  reference.setValidatorCompiler(() => () => true);
  reference.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await reference.register(swagger, swaggerOptions(basePath, readVersion()));
  const notServedHere = async () => {
    throw new Error('the API reference only describes this route');
  };
  for (const route of routes) reference.route({ ...route, handler: notServedHere });
  await reference.register(swaggerUi, {
    routePrefix: docsPath(basePath),
    // `urls` (the top bar's list of documents) takes precedence over the page's own `url`, the copy
    // beside the page: the top bar names and loads the document at its public address.
    uiConfig: {
      deepLinking: true,
      docExpansion: 'list',
      urls: [{ url: openApiPath(basePath), name: `tokend v1 (${openApiPath(basePath)})` }],
    },
    theme: {
      title: 'API reference · tokend',
      favicon: [
        { filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: FAVICON_SVG },
      ],
    },
    logo: { type: 'image/svg+xml', content: logoSvg(FAVICON_SVG) },
  });
  await reference.ready();
  return reference;
}

/** Request headers the page's files answer to (conditional and partial requests). */
const FORWARDED_REQUEST_HEADERS = ['accept', 'if-none-match', 'if-modified-since', 'range'];
/** Response headers that belong to the reference's own connection, not to the answer. */
const CONNECTION_HEADERS = new Set([
  'content-length',
  'connection',
  'keep-alive',
  'date',
  'transfer-encoding',
]);

export async function registerDocs(app: FastifyInstance, basePath: string): Promise<void> {
  const routes: DeclaredRoute[] = [];
  app.addHook('onRoute', (route) => {
    // HEAD twins of GET routes are not documented; hidden routes (the page's own) are not either.
    const methods = [route.method].flat().filter((method) => method !== 'HEAD');
    if (methods.length === 0 || isHidden(route.schema)) return;
    routes.push({ method: methods, url: route.url, schema: route.schema, config: route.config });
  });

  let built: Promise<FastifyInstance> | undefined;
  const reference = (): Promise<FastifyInstance> =>
    (built ??= buildReference(routes, basePath).catch((err: unknown) => {
      built = undefined; // the next request tries again
      throw err;
    }));
  app.addHook('onClose', async () => {
    const instance = await built?.catch(() => undefined);
    await instance?.close();
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
    async () => (await reference()).swagger(),
  );

  // The reference page is a document: helmet's headers, in a context of its own. Its files come from the
  // reference's instance, asked in-process.
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    // A HEAD is asked as a GET; Fastify leaves the body out of this app's answer.
    const answer = await (await reference()).inject({ method: 'GET', url: request.url, headers });
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !CONNECTION_HEADERS.has(name)) reply.header(name, value);
    return reply.code(answer.statusCode).send(answer.rawPayload);
  };
  await app.register(async (context) => {
    useDocumentHeaders(context);
    const hidden = { schema: { hide: true } };
    context.get(docsPath(basePath), hidden, page);
    context.get(`${docsPath(basePath)}/*`, hidden, page);
  });
}
