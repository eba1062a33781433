// The API reference: a structurally valid OpenAPI 3.1 document that lists every route the app registers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { RouteOptions } from 'fastify';
import { build } from '../helpers/app.ts';
import { openApiText, withoutEmptyTags } from '../../bin/openapi.ts';
import { DOCUMENT_FILE, forDeployment } from '../../src/docs/plugin.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A route's URL without its parameters' patterns: Fastify's `/tokens/:id(^[0-9]+$)` is `/tokens/:id`. */
const withoutPatterns = (url: string): string => url.replace(/(:[A-Za-z0-9_]+)\([^/]*\)/g, '$1');

/** Fastify's `/tokens/:id/delete` in OpenAPI's form `/tokens/{id}/delete`. */
const openApiPath = (url: string): string => withoutPatterns(url).replace(/:([A-Za-z0-9_]+)/g, '{$1}');

async function buildRecordingRoutes(t: Parameters<typeof build>[0], env: Record<string, string> = {}) {
  const routes: RouteOptions[] = [];
  const h = await build(t, 'sqlite', env, { onRoute: (route) => void routes.push(route) });
  return { h, routes };
}

/** Every (method, url) a client can call, leaving out HEAD twins of GETs and routes hidden from the document. */
function callableRoutes(routes: RouteOptions[]): Array<{ method: string; url: string }> {
  const out: Array<{ method: string; url: string }> = [];
  for (const route of routes) {
    if ((route.schema as Json | undefined)?.hide === true) continue;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      out.push({ method: method.toLowerCase(), url: route.url ?? '' });
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with info, paths, and responses on every operation', async (t) => {
    const { h } = await buildRecordingRoutes(t);
    const r = await h.app.inject({ url: '/api/v1/openapi.json' });
    assert.equal(r.statusCode, 200, r.body);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const doc = r.json() as Json;
    assert.match(String(doc.openapi), /^3\.1\.\d+$/);
    assert.ok(isObject(doc.info));
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
    assert.ok(isObject(doc.paths) && Object.keys(doc.paths).length > 0);
    const schemes = ((doc.components as Json | undefined)?.securitySchemes ?? {}) as Json;
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      assert.ok(path.startsWith('/'), `path ${path} must start with /`);
      assert.ok(isObject(item), `path item ${path}`);
      const ops = Object.entries(item).filter(([k]) => METHODS.includes(k));
      assert.ok(ops.length > 0, `${path} has no operation`);
      for (const [method, op] of ops) {
        const where = `${method.toUpperCase()} ${path}`;
        operations++;
        assert.ok(isObject(op), where);
        assert.ok(
          isObject(op.responses) && Object.keys(op.responses).length > 0,
          `${where} has no responses`,
        );
        for (const [status, response] of Object.entries(op.responses)) {
          assert.match(status, /^([1-5](\d\d|XX)|default)$/, `${where}: response key ${status}`);
          assert.ok(isObject(response) && typeof response.description === 'string', `${where} ${status}`);
        }
        // Every {param} in the path is declared as a required path parameter.
        const declared = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
        for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
          const param = declared.find((p) => p.name === name);
          assert.ok(param, `${where}: path parameter ${name} is not declared`);
          assert.equal(param.required, true, `${where}: path parameter ${name} must be required`);
        }
        for (const requirement of (op.security ?? []) as Json[])
          for (const scheme of Object.keys(requirement))
            assert.ok(scheme in schemes, `${where}: unknown security scheme ${scheme}`);
      }
    }
    assert.ok(operations >= 10, `only ${operations} operations`);
  });

  it('lists every route registered under {base_url}/v1, and every other visible route', async (t) => {
    const { h, routes } = await buildRecordingRoutes(t);
    const doc = (await h.app.inject({ url: '/api/v1/openapi.json' })).json() as { paths: Json };
    const callable = callableRoutes(routes);
    const v1 = callable.filter((r) => r.url.startsWith('/api/v1/'));
    // The token operations, and revoke by id, are among them.
    for (const expected of [
      'post /api/v1/tokens',
      'post /api/v1/token/new',
      'get /api/v1/tokens',
      'get /api/v1/tokens/self',
      'post /api/v1/tokens/self/delete',
      'delete /api/v1/tokens/self',
      'post /api/v1/tokens/fix_privileges',
      'post /api/v1/tokens/:id/delete',
      'delete /api/v1/tokens/:id',
      'get /api/v1/ping',
    ])
      assert.ok(
        v1.some((r) => `${r.method} ${withoutPatterns(r.url)}` === expected),
        `${expected} was not registered`,
      );
    const missing = callable.filter(
      (r) => !isObject((doc.paths[openApiPath(r.url)] as Json | undefined)?.[r.method]),
    );
    assert.deepEqual(missing, [], 'routes missing from the OpenAPI document');
    // …and nothing documented that is not a route.
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as Json)
        .filter((k) => METHODS.includes(k))
        .map((m) => `${m} ${path}`),
    );
    const registered = new Set(callable.map((r) => `${r.method} ${openApiPath(r.url)}`));
    assert.deepEqual(
      documented.filter((d) => !registered.has(d)),
      [],
    );
  });

  it('follows BASE_PATH and documents credentials and the error envelope', async (t) => {
    const { h } = await buildRecordingRoutes(t, { BASE_PATH: '/x/y' });
    assert.equal((await h.app.inject({ url: '/api/v1/openapi.json' })).statusCode, 404);
    const doc = (await h.app.inject({ url: '/x/y/v1/openapi.json' })).json() as {
      paths: Record<string, Json>;
    };
    const list = doc.paths['/x/y/v1/tokens']?.get as Json;
    assert.ok(list, 'GET /x/y/v1/tokens');
    const security = (list.security ?? []) as Json[];
    assert.ok(security.some((s) => 'rippleToken' in s));
    assert.ok(security.some((s) => 'bearer' in s));
    const responses = list.responses as Json;
    assert.ok(isObject(responses.default), 'error envelope as the default response');
    // The creation endpoint documents expires_in, and its answer expires_at.
    const create = doc.paths['/x/y/v1/tokens']?.post as Json;
    const body = JSON.stringify(create.requestBody);
    assert.match(body, /"expires_in"/);
    assert.match(JSON.stringify(create.responses), /"expires_at"/);
  });

  it('is titled for tokend, and every section has operations: the sign-in pages under "web pages"', async (t) => {
    const { h } = await buildRecordingRoutes(t);
    const doc = (await h.app.inject({ url: '/api/v1/openapi.json' })).json() as {
      info: { title: string; description: string };
      tags: Array<{ name: string; description: string }>;
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    assert.equal(doc.info.title, 'tokend');
    assert.match(doc.info.description, /^tokend, the token service/);
    assert.match(doc.info.description, /`\/api\/v1`/);
    const declared = doc.tags.map((tag) => tag.name);
    assert.deepEqual(declared, ['tokens', 'users', 'oauth', 'web pages', 'operations']);
    const used = new Map<string, string[]>();
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item).filter(([k]) => METHODS.includes(k))) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.ok(op.tags && op.tags.length > 0, `${where} is in no section (it would show under "default")`);
        for (const tag of op.tags) {
          assert.ok(declared.includes(tag), `${where}: section ${tag} is not declared`);
          used.set(tag, [...(used.get(tag) ?? []), where]);
        }
      }
    for (const tag of declared) assert.ok(used.has(tag), `section ${tag} is empty`);
    assert.deepEqual(used.get('web pages')?.sort(), ['GET /login', 'POST /login', 'POST /logout']);
    for (const tag of doc.tags) assert.notEqual(tag.description, '', tag.name);
  });

  it('is committed as the routes declare it now (npm run openapi writes it)', async () => {
    assert.equal(
      readFileSync(DOCUMENT_FILE, 'utf8'),
      await openApiText(),
      'src/docs/openapi.json is stale: run npm run openapi and commit it',
    );
  });

  it("moves the API's paths and the introduction to a deployment's base path, and nothing else", () => {
    const committed = {
      openapi: '3.1.0',
      info: { title: 'tokend', description: 'API tokens under `/api/v1`' },
      paths: { '/api/v1/tokens': { get: {} }, '/login': { get: {} }, '/api/v1': {}, '/apis/v1/x': {} },
    };
    for (const basePath of ['/api', '/x/y', '']) {
      const deployed = forDeployment(committed, basePath);
      assert.deepEqual(Object.keys(deployed.paths), [
        `${basePath}/v1/tokens`,
        '/login',
        '/api/v1',
        '/apis/v1/x',
      ]);
      assert.deepEqual(deployed.paths[`${basePath}/v1/tokens`], { get: {} });
      assert.match(String(deployed.info.description), new RegExp(`API tokens under \`${basePath}/v1\``));
      assert.equal(deployed.info.title, 'tokend');
      assert.equal(deployed.openapi, '3.1.0');
    }
  });

  it('leaves out a declared section that no route is in', () => {
    const trimmed = withoutEmptyTags({
      paths: { '/a': { get: { tags: ['kept'] } }, '/b': { parameters: [], post: {} } },
      tags: [{ name: 'kept' }, { name: 'empty' }],
    });
    assert.deepEqual(trimmed.tags, [{ name: 'kept' }]);
  });

  it('titles the reference page for tokend, and its top bar loads {base_url}/v1/openapi.json', async (t) => {
    for (const basePath of ['/api', '/x/y', '']) {
      const { h } = await buildRecordingRoutes(t, { BASE_PATH: basePath });
      const page = await h.app.inject({ url: `${basePath}/docs` });
      assert.equal(page.statusCode, 200, basePath);
      assert.match(page.body, /<title>API reference · tokend<\/title>/);
      assert.match(
        page.body,
        /<link rel="icon" type="image\/svg\+xml" href="[^"]*\/static\/theme\/favicon\.svg"/,
      );
      assert.doesNotMatch(page.body, /favicon-32x32\.png/);
      const icon = await h.app.inject({ url: `${basePath}/docs/static/theme/favicon.svg` });
      assert.equal(icon.statusCode, 200);
      assert.equal(icon.headers['content-type'], 'image/svg+xml');
      const init = await h.app.inject({ url: `${basePath}/docs/static/swagger-initializer.js` });
      assert.equal(init.statusCode, 200);
      assert.match(String(init.headers['content-type']), /^application\/javascript/);
      // The top bar's list of documents names the public one, which swagger-ui loads instead of `url`.
      const config = /const config = (\{.*\})\n/.exec(init.body)?.[1];
      assert.ok(config, init.body);
      const urls = (JSON.parse(config) as { urls?: Array<{ url: string; name: string }> }).urls;
      assert.deepEqual(
        urls?.map((u) => u.url),
        [`${basePath}/v1/openapi.json`],
      );
      // The logo in the top bar is tokend's.
      assert.match(init.body, /data:image\/svg\+xml;base64,/);
      const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(init.body)?.[1] ?? '';
      assert.match(Buffer.from(logo, 'base64').toString('utf8'), />tokend<\/text>/);
      // …and what it loads is the document.
      const served = await h.app.inject({ url: `${basePath}/v1/openapi.json` });
      assert.equal(served.statusCode, 200);
      const doc = served.json() as {
        info: { title: string };
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      assert.equal(doc.info.title, 'tokend');
      // The API's error envelope is documented for the API only, wherever it lives.
      assert.ok(doc.paths[`${basePath}/v1/tokens`]?.get?.responses.default, basePath);
      assert.equal(doc.paths['/login']?.get?.responses.default, undefined, basePath);
      assert.equal(doc.paths['/health/live']?.get?.responses.default, undefined, basePath);
    }
  });

  it('serves the interactive reference at {base_url}/docs', async (t) => {
    const { h } = await buildRecordingRoutes(t);
    const page = await h.app.inject({ url: '/api/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /swagger-ui/i);
    const init = await h.app.inject({ url: '/api/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    // The page loads the same document.
    const json = await h.app.inject({ url: '/api/docs/json' });
    const served = await h.app.inject({ url: '/api/v1/openapi.json' });
    assert.deepEqual(json.json(), served.json());
  });
});
