// Helpers for tests against real sockets: a tokend child process, a cuttable TCP proxy, raw HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';
import { createServer, Socket, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { DatabaseConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { CURRENT_PASSWORD_VERSION, PasswordHasher } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/tokens/service.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Rejects with `what` when `promise` has not settled within `ms` (a hang detector, not a benchmark). */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries `attempt` until it returns true, at most `tries` times, `intervalMs` apart. */
export async function eventually(tries: number, intervalMs: number, attempt: () => Promise<boolean>) {
  for (let i = 0; i < tries; i++) {
    if (await attempt().catch(() => false)) return true;
    await sleep(intervalMs);
  }
  return false;
}

export interface SeedUser {
  id: number;
  username: string;
  password: string;
}

/** Creates the schema and `count` active users directly in the database (no HTTP, no rate limit). */
export async function seedUsers(
  database: DatabaseConfig,
  count: number,
  privileges = 3,
): Promise<SeedUser[]> {
  const store = await openStore(database);
  const hasher = new PasswordHasher({ cost: 4, concurrency: 4 });
  const users: SeedUser[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const username = `load${i}_${Math.random().toString(36).slice(2, 8)}`;
      const password = `pw-${i}-${Math.random().toString(36).slice(2)}`;
      const id = await insertUser(store.db, store.dialect, {
        username,
        passwordHash: await hasher.hash(password),
        passwordVersion: CURRENT_PASSWORD_VERSION,
        privileges,
        now: nowSeconds(),
      });
      users.push({ id, username, password });
    }
  } finally {
    await store.close();
  }
  return users;
}

export interface TokendProcess {
  child: ChildProcess;
  port: number;
  /** Every line the process wrote to stdout so far. */
  lines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops the process (SIGKILL) if it is still running. */
  kill(): Promise<void>;
}

/** A port that was free a moment ago (the kernel picks it; the child binds it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts `node src/server.ts` on a free loopback port and resolves once /health/live answers. */
export async function startTokend(env: Record<string, string>): Promise<TokendProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      BCRYPT_COST: '4',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`tokend exited before listening (code ${child.exitCode}): ${stderr}`);
    const live = await http({ port, path: '/health/live' }).catch(() => undefined);
    if (live?.status === 200) break;
    if (i >= 300) {
      await kill();
      throw new Error(`tokend did not start within 15 s: ${stderr}`);
    }
    await sleep(50);
  }
  return { child, port, lines, stderr: () => stderr, exited, kill };
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpOptions {
  port: number;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: Agent | false;
  localAddress?: string;
}

/** One HTTP request on loopback; rejects on any socket error (reset, refused). */
export function http(options: HttpOptions): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: options.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: {
          ...(options.body !== undefined
            ? {
                'content-type': 'application/json',
                'content-length': String(Buffer.byteLength(options.body)),
              }
            : {}),
          ...options.headers,
        },
        agent: options.agent ?? false,
        localAddress: options.localAddress,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * A TCP proxy on loopback in front of a database server. cut() closes every connection and refuses new
 * ones (the database "goes away"); freeze() keeps every connection open but lets nothing through and
 * connects nothing (the database hangs); restore() brings back a working path on the same port.
 */
export class TcpProxy {
  port = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private frozen = false;
  private readonly targetPort: number;
  private readonly targetHost: string;

  constructor(targetPort: number, targetHost = '127.0.0.1') {
    this.targetPort = targetPort;
    this.targetHost = targetHost;
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = new Socket();
      this.track(client);
      this.track(upstream);
      if (!this.frozen) upstream.connect(this.targetPort, this.targetHost);
      client.on('data', (chunk: Buffer) => {
        if (!this.frozen) upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!this.frozen) client.write(chunk);
      });
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Drops every open connection and stops accepting new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Every connection stays open and silent; new ones are accepted and left hanging. */
  freeze(): void {
    this.frozen = true;
  }

  /** Ends an outage: hung connections are dropped (their protocol state is lost) and new ones work. */
  async restore(): Promise<void> {
    if (this.frozen) {
      this.frozen = false;
      for (const s of this.sockets) s.destroy();
    }
    if (!this.server) await this.start();
  }

  close(): Promise<void> {
    return this.cut();
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  private track(socket: Socket) {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}
