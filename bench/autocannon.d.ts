// The part of autocannon's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  /** A request as autocannon builds it (the fields the bench touches; the rest pass through). */
  interface RequestParams {
    headers?: Record<string, string>;
    [field: string]: unknown;
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    timeout?: number;
    /** Called with each connection's client as it is made (per-connection headers, bodies). */
    setupClient?: (client: { setHeaders(headers: Record<string, string>): void }) => void;
    /** Requests sent in turn; setupRequest rewrites each one before it is sent. */
    requests?: Array<{
      setupRequest?: (request: RequestParams) => RequestParams;
    }>;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { total: number; average: number };
  }
  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
