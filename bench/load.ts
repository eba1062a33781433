// Drives one server with autocannon for a fixed time. Latencies are recorded here, per response, in
// fractions of a millisecond (autocannon's own histogram counts whole milliseconds).
import autocannon from 'autocannon';

export interface LoadSpec {
  port: number;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  /**
   * Headers of each connection in turn (the i-th connection gets entry i modulo their number), e.g. a
   * token of its own per connection, as distinct clients send; they replace `headers`.
   */
  connectionHeaders?: ReadonlyArray<Record<string, string>>;
  /**
   * Headers added to each request in turn (the n-th request sent gets `requestHeaders(n)`), e.g. a token
   * drawn from a whole data set, so that reads do not hit the same few index pages.
   */
  requestHeaders?: (n: number) => Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses that were not 2xx, plus connection errors and timeouts: any of them spoils the figure. */
  failures: number;
  /**
   * CPU time the server process used per request (µs), when measured: much steadier than req/s on a
   * machine that other work shares, since it does not count the time the server waited for a core.
   */
  cpuUsPerRequest?: number;
  /**
   * CPU time the database server's processes used per request (µs), when measured (PostgreSQL, MariaDB):
   * what the server's share of the work costs, which the server process's own figure leaves out.
   */
  databaseCpuUsPerRequest?: number;
}

/** Every latency behind a result, kept out of the result itself (which goes into results.json). */
const latenciesOf = new WeakMap<LoadResult, Float64Array>();

const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function result(requests: number, seconds: number, failures: number, latencies: Float64Array): LoadResult {
  const sorted = latencies.slice().sort();
  const r = {
    requests,
    seconds,
    rps: requests / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    failures,
  };
  latenciesOf.set(r, sorted);
  return r;
}

/** autocannon's setupClient for per-connection headers (called once per connection it opens). */
function connectionSetup(
  headers: LoadSpec['connectionHeaders'],
): ((client: { setHeaders(headers: Record<string, string>): void }) => void) | undefined {
  if (!headers || headers.length === 0) return undefined;
  let next = 0;
  return (client) => client.setHeaders(headers[next++ % headers.length]!);
}

/** autocannon's requests for per-request headers (setupRequest is called for every request it sends). */
function requestSetup(headers: LoadSpec['requestHeaders']) {
  if (!headers) return undefined;
  let next = 0;
  return [
    {
      setupRequest: (request: { headers?: Record<string, string>; [field: string]: unknown }) => ({
        ...request,
        headers: { ...request.headers, ...headers(next++) },
      }),
    },
  ];
}

export async function load(spec: LoadSpec): Promise<LoadResult> {
  const instance = autocannon({
    url: `http://127.0.0.1:${spec.port}${spec.path}`,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    body: spec.body,
    setupClient: connectionSetup(spec.connectionHeaders),
    requests: requestSetup(spec.requestHeaders),
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 30,
  });
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  });
  const r = await instance;
  return result(r.requests.total, r.duration, r.non2xx + r.errors + r.timeouts, latencies.subarray(0, count));
}

/** Several runs as one: requests over total time, percentiles over every response. */
export function combine(results: LoadResult[]): LoadResult {
  const all = new Float64Array(results.reduce((n, r) => n + (latenciesOf.get(r)?.length ?? 0), 0));
  let at = 0;
  for (const r of results) {
    const l = latenciesOf.get(r) ?? new Float64Array(0);
    all.set(l, at);
    at += l.length;
  }
  const sum = (f: (r: LoadResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const combined = result(
    sum((r) => r.requests),
    sum((r) => r.seconds),
    sum((r) => r.failures),
    all,
  );
  if (results.every((r) => r.cpuUsPerRequest !== undefined))
    combined.cpuUsPerRequest = sum((r) => r.cpuUsPerRequest! * r.requests) / combined.requests;
  if (results.every((r) => r.databaseCpuUsPerRequest !== undefined))
    combined.databaseCpuUsPerRequest =
      sum((r) => r.databaseCpuUsPerRequest! * r.requests) / combined.requests;
  return combined;
}

/**
 * Runs a load and adds the CPU time `cpuSeconds()` (the server's) grew by, per request; and, given
 * `databaseCpuSeconds`, the database server's too.
 */
export async function loadWithCpu(
  spec: LoadSpec,
  cpuSeconds: () => number,
  databaseCpuSeconds?: () => number,
): Promise<LoadResult> {
  const before = cpuSeconds();
  const databaseBefore = databaseCpuSeconds?.();
  const r = await load(spec);
  const requests = Math.max(1, r.requests);
  r.cpuUsPerRequest = ((cpuSeconds() - before) * 1e6) / requests;
  if (databaseCpuSeconds !== undefined)
    r.databaseCpuUsPerRequest = ((databaseCpuSeconds() - databaseBefore!) * 1e6) / requests;
  return r;
}

/**
 * Runs each side in turn, `rounds` times, and returns every side's runs. Alternating short runs keeps
 * a change in the machine's background load from favouring one side of a comparison.
 */
export async function alternate<T>(rounds: number, sides: ReadonlyArray<() => Promise<T>>): Promise<T[][]> {
  const out = sides.map(() => [] as T[]);
  for (let round = 0; round < rounds; round++)
    for (const [i, side] of sides.entries()) out[i]!.push(await side());
  return out;
}

/**
 * A run of `spec.seconds` whose figures are thrown away: connection set-up, caches and, above all,
 * V8's tiering up of the request path, which under load on 2 cores takes tokend several seconds.
 */
export async function warmUp(spec: LoadSpec): Promise<void> {
  await load(spec);
}
