// Tests against real sockets: a tokend child process on a free loopback port, raw HTTP and JSON requests
// to it, and a TCP proxy in front of a database or Redis that can fail the way a server does.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';
import { createServer, Socket, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Longest a tokend process may take to answer after it is started. */
const START_LIMIT_MS = 20_000;

/** A port that was free a moment ago (the kernel picks it; the child binds it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface TokendProcess {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:{port}/api/v1` */
  baseUrl: string;
  /** Every line the process wrote to stdout so far. */
  lines: string[];
  stderr(): string;
  /** Everything the process wrote so far, stdout and stderr as they came. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops the process (SIGKILL) if it is still running. */
  kill(): Promise<void>;
  /** SIGTERM, then the exit code (SIGKILL and null after 20 s). */
  stop(): Promise<number | null>;
}

/**
 * Starts `node src/server.ts` (or `node <args>`) on a free loopback port and resolves once /health/live
 * answers (bounded).
 */
export async function startTokend(
  env: Record<string, string>,
  args: string[] = ['src/server.ts'],
): Promise<TokendProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
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
  let output = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    output += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = async () => {
    if (running()) child.kill('SIGKILL');
    await exited;
  };
  const stop = async () => {
    if (!running()) return child.exitCode;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const { code } = await exited;
    clearTimeout(killer);
    return code;
  };
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (!running()) throw new Error(`tokend exited before listening (code ${child.exitCode}): ${output}`);
    const live = await http({ port, path: '/health/live' }).catch(() => undefined);
    if (live?.status === 200) break;
    if (Date.now() > deadline) {
      await kill();
      throw new Error(`tokend did not start within ${START_LIMIT_MS} ms: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    lines,
    stderr: () => stderr,
    output: () => output,
    exited,
    kill,
    stop,
  };
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

export interface JsonResponse {
  status: number;
  body: Record<string, unknown>;
}

/** A request through fetch to `url`, its answer read as JSON; rejects after 15 s. */
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
 * A TCP proxy on loopback in front of a database or Redis server. cut() closes every connection and
 * refuses new ones (the server "goes away"); freeze() keeps every connection open but lets nothing through
 * and connects nothing (the server hangs); restore() brings back a working path on the same port.
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
