// Load-balancer probes at the server root: /health/live (the process answers) and /health/ready
// (the instance can serve: the dependencies it needs answer). Each dependency check is bounded, so a
// hung database makes the probe say 503 promptly instead of hanging with it. A dependency the instance
// serves without (Redis: the login limits fall back to a per-instance count) is reported as degraded,
// and readiness stays 200: taking every instance out because a shared optional service is down would
// stop a fleet that still works.
import type { FastifyInstance } from 'fastify';
import { sendEnvelope } from '../http/envelope.ts';
import { isDraining } from './drain.ts';

export interface ReadinessCheck {
  /** Shown in the probe's answer, e.g. "database". */
  name: string;
  /** Resolves when the dependency answers; rejects otherwise. */
  check: () => Promise<unknown>;
  /** The instance serves without it: failing, it is reported as degraded and readiness stays 200. */
  optional?: boolean;
}

export interface HealthOptions {
  checks: ReadonlyArray<ReadinessCheck>;
  /** How long one check may take before it counts as failed. */
  timeoutMs: number;
}

export const DEFAULT_READY_TIMEOUT_MS = 1000;

/** Resolves to true when `check` settles successfully within `timeoutMs`. Never rejects. */
export async function passesWithin(check: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(check)
        .then(
          () => true,
          () => false,
        ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const healthSchema = {
  response: {
    '2xx': {
      type: 'object',
      properties: {
        code: { type: 'integer' },
        message: { type: 'string' },
        checks: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    '5xx': {
      type: 'object',
      properties: {
        code: { type: 'integer' },
        message: { type: 'string' },
        checks: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
} as const;

export async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  app.get('/health/live', { schema: healthSchema, logLevel: 'warn' }, async (_request, reply) =>
    sendEnvelope(reply, 200, 'alive'),
  );

  app.get('/health/ready', { schema: healthSchema, logLevel: 'warn' }, async (_request, reply) => {
    if (isDraining(app.server)) return sendEnvelope(reply, 503, 'Not ready: shutting down.');
    const results = await Promise.all(
      options.checks.map(async ({ name, check, optional = false }) => {
        const ok = await passesWithin(check, options.timeoutMs);
        return { name, state: ok ? 'ok' : optional ? 'degraded' : 'failing' };
      }),
    );
    const checks = Object.fromEntries(results.map(({ name, state }) => [name, state]));
    const named = (state: string) =>
      results
        .filter((r) => r.state === state)
        .map((r) => r.name)
        .join(', ');
    if (named('failing') !== '')
      return sendEnvelope(reply, 503, `Not ready: ${named('failing')} not answering.`, { checks });
    if (named('degraded') !== '')
      return sendEnvelope(reply, 200, `ready, degraded: ${named('degraded')} not answering.`, { checks });
    return sendEnvelope(reply, 200, 'ready', { checks });
  });
}
