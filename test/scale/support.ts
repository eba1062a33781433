// Helpers of the scale tests: is Redis there, free ports, tokend server processes, a TCP proxy that can
// fail the way a server does.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { IN_CI, REDIS_URL } from '../helpers/dialects.ts';

export { REDIS_URL };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function redisProblem(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    client.disconnect();
  }
}

/**
 * Why tests that need Redis must skip, or undefined when Redis answers. With CI=true a missing Redis
 * fails the run instead (.ci/services.sh starts it).
 */
export async function redisSkipReason(): Promise<string | undefined> {
  const problem = await redisProblem();
  if (problem === undefined) return undefined;
  if (IN_CI) throw new Error(`CI=true but the Redis test server (${REDIS_URL}) does not answer: ${problem}`);
  return `Redis at ${REDIS_URL} does not answer (${problem}); set TEST_REDIS_URL or start redis-server`;
}

/** A key prefix no other test uses, so tests sharing one Redis never see each other's counts. */
export const uniqueRedisPrefix = (): string => `tokend-test:${randomBytes(6).toString('hex')}:`;

/** A TCP port that was free a moment ago (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL and null after 20 s). */
  stop(): Promise<number | null>;
}

/** Starts `node src/server.ts` (or `node <args>`) on a free port and waits (bounded) until it answers HTTP. */
export async function startServer(
  env: Record<string, string>,
  args: string[] = ['src/server.ts'],
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      BCRYPT_COST: '4',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const baseUrl = `http://127.0.0.1:${port}/api/v1`;

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`tokend exited with ${child.exitCode} at start-up:\n${output}`);
    try {
      const r = await fetch(`${baseUrl}/nope`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 404) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`tokend did not answer within 20 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    baseUrl,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}

export interface JsonResponse {
  status: number;
  body: Record<string, unknown>;
}

export async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/**
 * A TCP proxy in front of a real server. `hang()` keeps every socket open but forwards nothing (a server
 * that stopped answering); `refuse()` closes everything and stops listening (a server that is gone).
 */
export class FaultyProxy {
  readonly port: number;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private hanging = false;

  private constructor(server: Server, port: number) {
    this.server = server;
    this.port = port;
  }

  static async start(targetHost: string, targetPort: number): Promise<FaultyProxy> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const proxy = new FaultyProxy(server, port);
    server.on('connection', (client) => {
      const upstream = connect(targetPort, targetHost);
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on('close', () => proxy.sockets.delete(s));
        s.on('error', () => {});
      }
      client.on('data', (d) => {
        if (!proxy.hanging) upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!proxy.hanging) client.write(d);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    return proxy;
  }

  hang(): void {
    this.hanging = true;
  }

  async refuse(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** Listens again on the same port after refuse(), as a server that came back. */
  async restore(): Promise<void> {
    this.hanging = false;
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }
}
