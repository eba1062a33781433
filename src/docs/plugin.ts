// The API reference: the OpenAPI 3.1 document at {base_url}/v1/openapi.json, and an interactive page over it
// at {base_url}/docs (Swagger UI, titled for tokend, with its icon and logo).
//
// The document is openapi.json beside this file, made from the route schemas by bin/openapi.ts and committed
// (a test fails when it differs from what the routes declare). A server reads it on its first request
// and fills in its own deployment's part, the base path. The page's files are Swagger UI's build as
// @fastify/swagger-ui ships it (its static/ folder), read from disk when asked for; neither @fastify/swagger
// nor @fastify/swagger-ui's plugin is loaded by a server.
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { useDocumentHeaders } from '../http/security-headers.ts';
import { BROWSER_HOME } from '../http/errors.ts';
import { sendIcon } from '../web/routes.ts';
import { SWAGGER_UI_FILES, referencePage, swaggerInitializer } from './page.ts';

/** The committed document. */
export const DOCUMENT_FILE = new URL('./openapi.json', import.meta.url);
/** The base path the committed document is made for (the default BASE_PATH); a server replaces it with its own. */
export const GENERATED_BASE_PATH = '/api';

/** The path of the document, under the API's base path. */
export const openApiPath = (basePath: string): string => `${basePath}/v1/openapi.json`;
/** The path of the interactive reference page. */
export const docsPath = (basePath: string): string => `${basePath}/docs`;

/** The document's introduction, which names where the API is. */
export const serviceDescription = (basePath: string): string =>
  'tokend, the token service: API tokens under `' +
  `${basePath}/v1` +
  '`, an OAuth 2.0 authorization server, and the sign-in pages. Every JSON body of the v1 API ' +
  'carries `code` and `message`; `pls200` forces HTTP 200 and a `callback` query parameter answers JSONP. ' +
  `Make, regenerate and revoke your API tokens on [your token page](${BROWSER_HOME}).`;

/** The parts of the document a deployment changes. */
export interface OpenApiDocument {
  info: { description?: string; [field: string]: unknown };
  paths: Record<string, unknown>;
  [field: string]: unknown;
}

/** The committed document for a server whose API is under `basePath`: the API's paths and the introduction. */
export function forDeployment(document: OpenApiDocument, basePath: string): OpenApiDocument {
  const api = `${GENERATED_BASE_PATH}/v1/`;
  const paths = Object.entries(document.paths).map(([path, item]) => [
    path.startsWith(api) ? `${basePath}${path.slice(GENERATED_BASE_PATH.length)}` : path,
    item,
  ]);
  return {
    ...document,
    info: { ...document.info, description: serviceDescription(basePath) },
    paths: Object.fromEntries(paths),
  };
}

/** Where @fastify/swagger-ui keeps Swagger UI's build. */
const swaggerUiFile = (name: string): string =>
  fileURLToPath(import.meta.resolve(`@fastify/swagger-ui/static/${name}`));

export async function registerDocs(app: FastifyInstance, basePath: string): Promise<void> {
  // The document as this server serves it, read on the first request (again after a failure).
  let served: Promise<string> | undefined;
  const documentText = (): Promise<string> =>
    (served ??= fs
      .readFile(DOCUMENT_FILE, 'utf8')
      .then((text) => JSON.stringify(forDeployment(JSON.parse(text) as OpenApiDocument, basePath)))
      .catch((err: unknown) => {
        served = undefined;
        throw err;
      }));
  const sendDocument = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.type('application/json; charset=utf-8').send(await documentText());

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
    sendDocument,
  );

  // The reference page is a document: helmet's headers, in a context of its own.
  const docs = docsPath(basePath);
  await app.register(async (context) => {
    useDocumentHeaders(context);
    const hidden = { schema: { hide: true } };
    context.get(docs, hidden, async (_request, reply) =>
      reply.type('text/html; charset=utf-8').send(referencePage(docs).value),
    );
    context.get(`${docs}/json`, hidden, sendDocument);
    context.get(`${docs}/static/swagger-initializer.js`, hidden, async (_request, reply) =>
      reply.type('application/javascript; charset=utf-8').send(swaggerInitializer(openApiPath(basePath))),
    );
    context.get(`${docs}/static/theme/favicon.svg`, hidden, sendIcon);
    context.get<{ Params: { file: string } }>(`${docs}/static/:file`, hidden, async (request, reply) => {
      const { file } = request.params;
      const type = Object.hasOwn(SWAGGER_UI_FILES, file) ? SWAGGER_UI_FILES[file] : undefined;
      if (type === undefined) return reply.callNotFound();
      return reply
        .type(type)
        .header('Cache-Control', 'public, max-age=86400')
        .send(await fs.readFile(swaggerUiFile(file)));
    });
  });
}
