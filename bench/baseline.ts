// The baseline of scenario 1: a bare Fastify app (same version, no logger, no plugins) that answers
// one route with a fixed envelope, the same one tokend answers, so only tokend's own work differs.
//
//   PORT=… BASELINE_PATH=/api/v1/tokens/self BASELINE_BODY='{"code":200,…}' node bench/baseline.ts
import Fastify from 'fastify';

const port = Number(process.env.PORT ?? 0);
const path = process.env.BASELINE_PATH ?? '/';
const envelope = JSON.parse(process.env.BASELINE_BODY ?? '{"code":200,"message":"ok"}') as Record<
  string,
  unknown
>;

const app = Fastify();
app.get(path, async () => envelope);
app.get('/ready', async () => ({ code: 200, message: 'ok' }));
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port });
