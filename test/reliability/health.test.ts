// /health/live and /health/ready: envelopes, and a dependency that hangs makes readiness 503 within its
// probe timeout instead of hanging the probe; an optional one (Redis) makes it degraded, still 200.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { build, body } from '../helpers/app.ts';
import { healthRoutes, passesWithin } from '../../src/health/routes.ts';
import { within } from '../helpers/waiting.ts';

describe('health probes', () => {
  it('live and ready answer 200 envelopes with the database check', async (t) => {
    const h = await build(t, 'sqlite');
    const live = await h.app.inject({ url: '/health/live' });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(body(live), { code: 200, message: 'alive' });
    const ready = await h.app.inject({ url: '/health/ready' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(body(ready), { code: 200, message: 'ready', checks: { database: 'ok' } });
    // Probes live at the server root, outside BASE_PATH.
    assert.equal((await h.app.inject({ url: '/api/health/ready' })).statusCode, 404);
  });

  it('a hanging or failing dependency makes ready a 503 naming it, within the probe timeout', async (t) => {
    const app = Fastify();
    t.after(() => app.close());
    const never = new Promise<never>(() => {});
    await app.register(healthRoutes, {
      timeoutMs: 200,
      checks: [
        { name: 'database', check: () => Promise.resolve() },
        { name: 'redis', check: () => never },
        { name: 'broken', check: () => Promise.reject(new Error('down')) },
        {
          name: 'throws',
          check: () => {
            throw new Error('sync');
          },
        },
      ],
    });
    const r = await within(2000, 'ready', app.inject({ url: '/health/ready' }));
    assert.equal(r.statusCode, 503);
    assert.deepEqual(body(r).checks, {
      database: 'ok',
      redis: 'failing',
      broken: 'failing',
      throws: 'failing',
    });
    assert.equal(body(r).code, 503);
    assert.match(body(r).message as string, /redis, broken, throws/);
    assert.equal((await app.inject({ url: '/health/live' })).statusCode, 200);
  });

  it('an optional dependency failing leaves ready at 200, degraded; a required one failing is still 503', async (t) => {
    const app = Fastify();
    t.after(() => app.close());
    let databaseUp = true;
    const never = new Promise<never>(() => {});
    await app.register(healthRoutes, {
      timeoutMs: 200,
      checks: [
        {
          name: 'database',
          check: () => (databaseUp ? Promise.resolve() : Promise.reject(new Error('down'))),
        },
        { name: 'redis', optional: true, check: () => never },
      ],
    });
    const degraded = await within(2000, 'ready', app.inject({ url: '/health/ready' }));
    assert.equal(degraded.statusCode, 200);
    assert.deepEqual(body(degraded), {
      code: 200,
      message: 'ready, degraded: redis not answering.',
      checks: { database: 'ok', redis: 'degraded' },
    });
    databaseUp = false;
    const down = await within(2000, 'ready', app.inject({ url: '/health/ready' }));
    assert.equal(down.statusCode, 503);
    assert.deepEqual(body(down), {
      code: 503,
      message: 'Not ready: database not answering.',
      checks: { database: 'failing', redis: 'degraded' },
    });
  });

  it('passesWithin never rejects', async () => {
    assert.equal(await passesWithin(async () => 1, 100), true);
    assert.equal(await passesWithin(() => Promise.reject(new Error('x')), 100), false);
    assert.equal(await passesWithin(() => new Promise(() => {}), 50), false);
  });
});
