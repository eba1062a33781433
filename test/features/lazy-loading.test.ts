// What `tokend serve` leaves unloaded until something needs it: each of these packages costs idle memory
// (bench scenario 6) that a server holds for nothing until then. A resolve hook in the child records
// every package the process loads; the test reads the record after the server answered a plain read,
// then shows that the record does move when a request needs one of them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request, startTokend } from '../helpers/real-server.ts';
import { seedUsers } from '../helpers/seed-users.ts';

/** Records the name of each package the process resolves a module of, one per line. */
const RECORDER = `
import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const m =
      /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);
    if (m && !seen.has(m[1])) {
      seen.add(m[1]);
      appendFileSync(process.env.RECORD_PACKAGES, m[1] + '\\n');
    }
    return resolved;
  },
});
`;

/**
 * Loaded only when needed: by a login attempt, REDIS_URL, another backend, a password to hash, the API
 * reference's page (Swagger UI's files). (Ajv is not among them: the first answer with a response schema
 * loads it, through fast-json-stringify.)
 */
const LATER = ['rate-limiter-flexible', 'ioredis', 'pg', 'mysql2', '@node-rs/bcrypt', '@fastify/swagger-ui'];

describe('tokend serve loads packages when they are needed', () => {
  it('a plain read loads none of them; a login attempt loads the limiter; the API reference never loads @fastify/swagger', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-lazy-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const recorder = join(dir, 'recorder.mjs');
    const record = join(dir, 'packages.txt');
    writeFileSync(recorder, RECORDER);
    writeFileSync(record, '');
    const file = join(dir, 'tokend.db');
    const [user] = await seedUsers({ kind: 'sqlite', path: file }, 1);
    const server = await startTokend({ DATABASE_URL: `sqlite:${file}`, RECORD_PACKAGES: record }, [
      '--import',
      pathToFileURL(recorder).href,
      'bin/tokend.js',
      'serve',
    ]);
    t.after(() => server.kill());
    const loaded = () => new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean));

    const self = await request(`${server.baseUrl}/tokens/self`);
    assert.equal(self.status, 404);
    const first = loaded();
    assert.ok(first.has('fastify') && first.has('kysely'), 'the recorder sees what is loaded');
    assert.deepEqual(
      LATER.filter((name) => first.has(name)),
      [],
      'loaded at start-up or by a plain read',
    );

    // A password check counts the attempt first: the limiter's library comes with it.
    const login = await request(`${server.baseUrl}/tokens`, {
      method: 'POST',
      json: { username: user!.username, password: 'not the password' },
    });
    assert.equal(login.status, 403, JSON.stringify(login));
    assert.ok(loaded().has('rate-limiter-flexible'), 'loaded by the first login attempt');

    // The API reference is a committed document and Swagger UI's files: @fastify/swagger, which makes the
    // document, is a development dependency that a server never loads.
    const reference = await request(`${server.baseUrl}/openapi.json`);
    assert.equal(reference.status, 200);
    const page = await fetch(`${server.baseUrl.replace(/\/v1$/, '')}/docs/static/swagger-ui-bundle.js`);
    assert.equal(page.status, 200);
    await page.arrayBuffer();
    assert.ok(loaded().has('@fastify/swagger-ui'), "Swagger UI's files are found in their package");
    assert.equal(loaded().has('@fastify/swagger'), false, '@fastify/swagger loaded by a server');
  });
});
