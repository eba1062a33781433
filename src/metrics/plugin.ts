// GET /metrics (Prometheus text format) and the hooks that feed it. Registered before every route,
// so each request is counted under its route pattern, never its raw URL.
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { sendEnvelope } from '../http/envelope.ts';
import type { TokendMetrics } from './metrics.ts';

export interface MetricsOptions {
  metrics: TokendMetrics;
  /** METRICS_TOKEN: scrapes must send `Authorization: Bearer <token>`; unset, /metrics is off (404). */
  token: string | undefined;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Constant-time comparison of the presented bearer secret with the configured one. */
function presentsToken(request: FastifyRequest, expected: Buffer): boolean {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !/^bearer /i.test(header)) return false;
  return timingSafeEqual(digest(header.slice(7).trim()), expected);
}

const metricsSchema = {
  tags: ['operations'],
  summary: 'Prometheus metrics',
  description:
    'Request counts and latencies by route and code, tokens created, login attempts by outcome, ' +
    'fix_privileges runs, last_updated batch sizes, database pool use. ' +
    'Needs `Authorization: Bearer <METRICS_TOKEN>`; without METRICS_TOKEN it is off and answers 404.',
  response: {
    200: {
      description: 'Prometheus text exposition format',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
  },
} as const;

/**
 * Counts every request by method, route pattern and code, in one app-wide hook: registered before any
 * route, so every context inherits it. The pattern is the matched route's (`request.routeOptions.url`);
 * requests no route matched are counted under UNMATCHED_ROUTE.
 */
export const requestMetrics = fp<Pick<MetricsOptions, 'metrics'>>(
  async (app, { metrics }) => {
    // Each pattern's label, without its parameters' rules: `/tokens/:id(^[0-9]+$)` counts as `/tokens/:id`.
    const labels = new Map<string, string>();
    const labelOf = (url: string): string => {
      let label = labels.get(url);
      if (label === undefined) labels.set(url, (label = url.replace(/(:\w+)\([^/]*\)/g, '$1')));
      return label;
    };
    app.addHook('onResponse', (request, reply, done) => {
      const url = request.is404 ? undefined : request.routeOptions.url;
      const route = url === undefined ? undefined : labelOf(url);
      metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  },
  { name: 'tokend-request-metrics' },
);

/**
 * GET /metrics. The figures show login outcomes as they happen, so they are never public: only a scrape
 * that presents METRICS_TOKEN gets them, and without METRICS_TOKEN the route answers 404 saying how to
 * turn it on.
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app, { metrics, token }) => {
    const expected = token === undefined ? undefined : digest(token);
    app.addHook('onClose', async () => metrics.close());
    app.get('/metrics', { schema: metricsSchema }, async (request, reply) => {
      if (expected === undefined)
        return sendEnvelope(
          reply,
          404,
          'The metrics are off: set METRICS_TOKEN and scrape with Authorization: Bearer <METRICS_TOKEN>.',
        );
      if (!presentsToken(request, expected)) {
        reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
        return sendEnvelope(reply, 401, 'The metrics need Authorization: Bearer <METRICS_TOKEN>.');
      }
      const text = await metrics.registry.metrics();
      return reply.header('content-type', metrics.registry.contentType).send(text);
    });
  },
  { name: 'tokend-metrics' },
);
