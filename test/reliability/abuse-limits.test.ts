// Abuse limits on a real socket: oversized bodies (413) and headers (431), slowloris on the headers and on
// the body (408, connection cut), and the cap on connections per client address. Each runs while a normal
// client keeps calling the API, which must get its answers throughout.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { build, type Harness } from '../helpers/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { http } from '../helpers/real-server.ts';
import { sleep, within, eventually } from '../helpers/waiting.ts';

async function listening(
  t: TestContext,
  env: Record<string, string> = {},
): Promise<{ h: Harness; port: number }> {
  const h = await build(t, 'sqlite', env);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return { h, port: (h.app.server.address() as { port: number }).port };
}

/**
 * A normal client calling /api/v1/ping in a loop from `localAddress` until stop() is called.
 * stop() resolves to the number of answers, and rejects if any call failed or was not a 200.
 */
function normalClient(port: number, localAddress = '127.0.0.1') {
  let running = true;
  let answered = 0;
  const loop = (async () => {
    while (running) {
      const r = await within(5000, 'normal client', http({ port, path: '/api/v1/ping', localAddress }));
      assert.equal(r.status, 200, r.body);
      answered++;
      await sleep(20);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return answered;
    },
  };
}

/** Opens a raw TCP connection from `localAddress`; `closed` resolves with whatever the server sent. */
function rawSocket(port: number, localAddress = '127.0.0.1') {
  const socket: Socket = connect({ port, host: '127.0.0.1', localAddress });
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed, connected };
}

function parseRawResponse(raw: string): { status: number; body: unknown } {
  const [head = '', bodyText = ''] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, body: bodyText ? JSON.parse(bodyText) : undefined };
}

describe('abuse limits', () => {
  it('refuses oversized bodies with a 413 envelope, declared or streamed', async (t) => {
    const { h, port } = await listening(t);
    const client = normalClient(port);
    const big = JSON.stringify({ id: 1, password: 'x', description: 'a'.repeat(h.config.bodyLimit * 2) });
    for (let i = 0; i < 20; i++) {
      const declared = await http({ port, method: 'POST', path: '/api/v1/tokens', body: big });
      assert.equal(declared.status, 413);
      const envelope = JSON.parse(declared.body) as { code: number; message: string };
      assert.equal(envelope.code, 413);
      assert.match(envelope.message, /too large/);
    }
    // Without a Content-Length the limit applies while the body streams in.
    const streamed = rawSocket(port);
    await streamed.connected;
    streamed.socket.write(
      'POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const chunk = 'a'.repeat(16 * 1024);
    for (let i = 0; i < 10 && !streamed.socket.destroyed; i++)
      streamed.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    streamed.socket.end();
    const streamedAnswer = parseRawResponse(await within(5000, 'streamed body', streamed.closed));
    assert.equal(streamedAnswer.status, 413);
    assert.equal((streamedAnswer.body as { code: number }).code, 413);
    assert.ok((await client.stop()) > 0);
  });

  it('refuses oversized headers with a 431 envelope', async (t) => {
    const { h, port } = await listening(t);
    const client = normalClient(port);
    const huge = 'a'.repeat(h.config.http.maxHeaderSize + 1024);
    for (let i = 0; i < 20; i++) {
      const r = await http({ port, path: '/api/v1/ping', headers: { 'x-padding': huge } });
      assert.equal(r.status, 431);
      assert.deepEqual(JSON.parse(r.body), { code: 431, message: 'The request headers are too large.' });
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['x-frame-options'], 'DENY');
      assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/);
    }
    assert.ok((await client.stop()) > 0);
  });

  it('cuts off clients that send their headers one byte at a time (slowloris)', async (t) => {
    const { port } = await listening(t, { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '3000' });
    const client = normalClient(port);
    const request = 'GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'z'.repeat(200);
    const attackers = Array.from({ length: 30 }, () => rawSocket(port));
    await Promise.all(attackers.map((a) => a.connected));
    // One byte every 50 ms: never idle long enough for an inactivity timeout, never done (10 s of bytes).
    const drip = setInterval(() => {
      for (const a of attackers) {
        if (a.socket.destroyed) continue;
        const sent = a.socket.bytesWritten;
        if (sent < request.length) a.socket.write(request[sent]!);
      }
    }, 50);
    try {
      const answers = await within(8000, 'slowloris cut-off', Promise.all(attackers.map((a) => a.closed)));
      for (const raw of answers) {
        const { status, body } = parseRawResponse(raw);
        assert.equal(status, 408);
        assert.equal((body as { code: number }).code, 408);
      }
      assert.ok(
        attackers.every((a) => a.socket.bytesWritten < request.length),
        'a slow request got through',
      );
    } finally {
      clearInterval(drip);
    }
    assert.ok((await client.stop()) > 0);
  });

  it('cuts off clients that send their body one byte at a time', async (t) => {
    const { port } = await listening(t, { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
    const client = normalClient(port);
    const body = JSON.stringify({ username: 'x', password: 'y'.repeat(200) });
    const attackers = Array.from({ length: 10 }, () => rawSocket(port));
    await Promise.all(attackers.map((a) => a.connected));
    for (const a of attackers)
      a.socket.write(
        `POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
    let sentBytes = 0;
    const drip = setInterval(() => {
      if (sentBytes >= body.length) return;
      for (const a of attackers) if (!a.socket.destroyed) a.socket.write(body[sentBytes]!);
      sentBytes++;
    }, 50);
    try {
      const answers = await within(8000, 'slow body cut-off', Promise.all(attackers.map((a) => a.closed)));
      for (const raw of answers) assert.equal(parseRawResponse(raw).status, 408, raw);
      assert.ok(sentBytes < body.length, 'a slow body got through');
    } finally {
      clearInterval(drip);
    }
    assert.ok((await client.stop()) > 0);
  });

  it('caps open connections per client address; other addresses are served meanwhile', async (t) => {
    const CAP = 20;
    const { port } = await listening(t, { MAX_CONNECTIONS_PER_IP: String(CAP) });
    const hog = Array.from({ length: CAP * 2 }, () => rawSocket(port, '127.0.0.1'));
    await Promise.all(hog.map((a) => Promise.race([a.connected, a.closed])));
    const isOpen = () => hog.filter((a) => !a.socket.destroyed && a.socket.readyState === 'open').length;
    assert.ok(
      await eventually(40, 50, async () => isOpen() === CAP),
      `${isOpen()} hog connections open, cap ${CAP}`,
    );

    // The capped address gets no new connection through; another client is served normally.
    await assert.rejects(http({ port, path: '/api/v1/ping', localAddress: '127.0.0.1' }));
    const other = normalClient(port, '127.0.0.2');
    await sleep(200);
    assert.ok((await other.stop()) > 0);

    // Once the hog lets go, the address is served again.
    for (const a of hog) a.socket.destroy();
    assert.ok(
      await eventually(40, 50, async () => (await http({ port, path: '/api/v1/ping' })).status === 200),
      'the address stayed blocked after its connections closed',
    );
  });

  it('configures the limits from the environment, with safe defaults', () => {
    const defaults = loadConfig({}).http;
    assert.deepEqual(defaults, {
      connectionTimeoutMs: 60_000,
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 72_000,
      maxRequestsPerSocket: 10_000,
      maxHeaderSize: 16 * 1024,
      maxConnectionsPerIp: 512,
    });
    // Behind a trusted proxy every connection comes from the proxy: no per-address cap unless asked for.
    assert.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8' }).http.maxConnectionsPerIp, 0);
    assert.equal(loadConfig({ TRUST_PROXY: '1', MAX_CONNECTIONS_PER_IP: '64' }).http.maxConnectionsPerIp, 64);
    assert.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }), ConfigError);
    assert.throws(() => loadConfig({ MAX_HEADER_SIZE: '10' }), /MAX_HEADER_SIZE/);
  });
});
