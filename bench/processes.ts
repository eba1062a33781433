// Child processes of the bench: tokend and the baselines, each on its own loopback port, and what
// Linux says about their memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A free loopback port (the kernel's choice; closed again before use). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

export interface HttpAnswer {
  status: number;
  body: string;
}

export function httpRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        timeout: options.timeoutMs ?? 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface Server {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** ms from spawn until the first answered request */
  readonly startMs: number;
  /** Everything the process wrote (its log lines), for diagnostics and for waiting on a log line. */
  output(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** Path polled until it answers (any status). */
  readyPath: string;
  nodeOptions?: string[];
  timeoutMs?: number;
  /** The directory node runs in (args are relative to it); the project's root by default. */
  cwd?: string;
}

/** Spawns `node ARGS` with PORT set and waits until readyPath answers; the start time includes node's own. */
export async function startServer(options: StartOptions): Promise<Server> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), ...options.args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > 1_000_000) output = output.slice(-500_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = started + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${options.name} exited during start-up:\n${output.slice(-2000)}`);
    try {
      await httpRequest(port, options.readyPath, { timeoutMs: 1000 });
      break;
    } catch {
      if (performance.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(
          `${options.name} did not answer within ${options.timeoutMs ?? 30_000} ms:\n${output}`,
        );
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const startMs = performance.now() - started;
  return {
    name: options.name,
    port,
    child,
    startMs,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits until `test(output)` holds, polling; throws after timeoutMs. */
export async function waitForOutput(server: Server, test: (output: string) => boolean, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!test(server.output())) {
    if (performance.now() > deadline) throw new Error(`${server.name}: expected log line did not appear`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A numeric field of /proc/PID/status (kB fields in kB). */
function statusField(pid: number, field: 'VmRSS' | 'VmHWM' | 'nonvoluntary_ctxt_switches'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} for process ${pid}`);
  return Number(match[1]);
}

/** Resident set size of a process, in bytes. */
export const rssOf = (pid: number): number => statusField(pid, 'VmRSS') * 1024;
/** Peak resident set size since start or since the last resetPeakRss. */
export const peakRssOf = (pid: number): number => statusField(pid, 'VmHWM') * 1024;
/** How many times the kernel has taken the core from a process that could have gone on running. */
export const involuntarySwitchesOf = (pid: number): number => statusField(pid, 'nonvoluntary_ctxt_switches');
/** Resets the kernel's peak-RSS mark of a process (Linux: clear_refs 5). */
export const resetPeakRss = (pid: number): void => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** The ids of the running processes for which `test(pid)` holds (a process that ends meanwhile is left out). */
function processesWhere(test: (pid: number) => boolean): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (test(Number(entry))) out.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** Direct child processes of pid (cluster workers). */
export const childrenOf = (pid: number): number[] =>
  processesWhere((entry) => {
    const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
  });

/** Processes whose command name is one of `names` (e.g. every process of a database server). */
export const processesNamed = (names: readonly string[]): number[] =>
  processesWhere((entry) => names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim()));

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux build that matters

/** CPU seconds (user + system) a process has used, its child processes included when asked. */
export function cpuSecondsOf(pid: number, withChildren = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 of proc(5); utime and stime are fields 14 and 15
  const own = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  if (!withChildren) return own;
  return own + childrenOf(pid).reduce((sum, child) => sum + cpuSecondsOf(child, true), 0);
}
