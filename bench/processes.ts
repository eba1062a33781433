// Child processes of the bench: tokend and the baselines, each on its own loopback port, and what
// Linux says about their memory.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  /** The last MB the process wrote (its log lines), for diagnostics and for waiting on a log line. */
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

const TAIL_BYTES = 1 << 20;

/** The last TAIL_BYTES of a file. */
function tailOf(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, TAIL_BYTES));
    const read = readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * Spawns `node ARGS` with PORT set and waits until readyPath answers; the start time includes node's own.
 * The process's stdout and stderr go to a file of its own, as a service's log would: a log the bench read
 * through a pipe would cost the bench's process, which also runs the load generator, CPU of its own.
 */
export async function startServer(options: StartOptions): Promise<Server> {
  const port = await freePort();
  const logFile = join(tmpdir(), `bench-${options.name.replace(/\W+/g, '-')}-${port}-${process.pid}.log`);
  const logFd = openSync(logFile, 'a');
  const started = performance.now();
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...(options.nodeOptions ?? []), ...options.args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env, PORT: String(port) },
      stdio: ['ignore', logFd, logFd],
    });
  } finally {
    closeSync(logFd);
  }
  const output = () => tailOf(logFile);
  /** The start-up failed: the log's end goes into the error, and the log is removed. */
  const failed = (problem: string) => {
    const end = output().slice(-2000);
    rmSync(logFile, { force: true });
    return new Error(`${options.name} ${problem}:\n${end}`);
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = started + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw failed('exited during start-up');
    try {
      await httpRequest(port, options.readyPath, { timeoutMs: 1000 });
      break;
    } catch {
      if (performance.now() > deadline) {
        child.kill('SIGKILL');
        throw failed(`did not answer within ${options.timeoutMs ?? 30_000} ms`);
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
    output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(logFile, { force: true });
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

/** CPU seconds of every process whose name is one of `names` (all of a database server's processes). */
export function cpuSecondsOfNamed(names: readonly string[]): number {
  let total = 0;
  for (const pid of processesNamed(names)) {
    try {
      total += cpuSecondsOf(pid);
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}
