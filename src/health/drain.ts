// The first step of a graceful shutdown: keep serving for a short grace period, but answer every request
// with `Connection: close` and report not-ready, so keep-alive clients and load balancers move away before
// the listener closes. Closing idle keep-alive connections at once instead races with clients that are
// sending on them at that moment, and those requests die with a connection reset.
import type { Server } from 'node:http';

const draining = new WeakSet<Server>();

export const isDraining = (server: Server): boolean => draining.has(server);

/** Resolves after `graceMs`, or at once when no connection is open; the server keeps listening meanwhile. */
export async function drain(server: Server, graceMs: number): Promise<void> {
  if (draining.has(server)) return;
  draining.add(server);
  server.on('request', (_request, response) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  });
  const open = await new Promise<number>((resolve) =>
    server.getConnections((err, n) => resolve(err ? 1 : n)),
  );
  if (open === 0 || graceMs <= 0) return;
  await new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
}
