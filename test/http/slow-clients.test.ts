import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseConfig } from '../../server/config.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * What a slow or greedy client can hold of the api: a request that does not arrive within
 * REQUEST_TIMEOUT_SECONDS is answered 408 and closed, while answers that take long (a log stream)
 * and WebSockets live on; one address holds at most MAX_CONNECTIONS_PER_CLIENT connections.
 * The whole of 127.0.0.0/8 is loopback on Linux, so each case dials from an address of its own and
 * the test's other requests (from 127.0.0.1) do not count against it.
 */

const TIMEOUT_SECONDS = 2;
const CAP = 4;
let stack: TestStack;
let port: number;

beforeAll(async () => {
  stack = await startTestStack(
    {
      REQUEST_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      MAX_CONNECTIONS_PER_CLIENT: String(CAP),
      CONNECTION_CAP_EXEMPT: '127.0.0.9,127.0.1.0/24',
    },
    { browserHost: true },
  );
  port = Number(new URL(stack.url).port);
});

afterAll(async () => {
  await stack?.close();
});

/** A raw connection from `from`: what it received, and when it closed. */
async function connect(from: string) {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    closed,
    received: () => received,
    /** Sends a GET on the connection (kept alive) and resolves with the answer's status; 0 if the connection closes first. */
    async get(path: string) {
      const before = received.length;
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`);
      const deadline = Date.now() + 10_000;
      for (;;) {
        const answer = received.slice(before);
        const head = answer.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(answer)?.[1];
        if (head !== -1 && length !== undefined && answer.length >= head + 4 + Number(length)) {
          return Number(answer.slice(9, 12));
        }
        if (socket.destroyed || Date.now() > deadline) return 0;
        await sleep(20);
      }
    },
  };
}

/** Writes `parts` one by one, `everyMs` apart, until the connection closes; resolves how long it stayed open. */
async function dribble(from: string, parts: string[], everyMs: number) {
  const client = await connect(from);
  const started = Date.now();
  for (const part of parts) {
    if (client.socket.destroyed) break;
    client.socket.write(part);
    const closedMeanwhile = await Promise.race([client.closed.then(() => true), sleep(everyMs).then(() => false)]);
    if (closedMeanwhile) break;
  }
  const closedAt = await Promise.race([client.closed, sleep(15_000).then(() => null)]);
  return { openMs: closedAt === null ? Number.POSITIVE_INFINITY : closedAt - started, received: client.received() };
}

describe('request timeouts', () => {
  it('default to at most 30 s, and a connection cap of 256 per client with no address exempt', () => {
    const config = parseConfig({});
    expect(config.requestTimeoutSeconds).toBeLessThanOrEqual(30);
    expect(config.connectionCap).toEqual({ perClient: 256, exempt: [] });
    expect(() => parseConfig({ CONNECTION_CAP_EXEMPT: '10.0.0.0/33' })).toThrow(/CONNECTION_CAP_EXEMPT: "10.0.0.0\/33"/);
  });

  it('answer 408 and close a connection whose headers come too slowly', { timeout: 30_000 }, async () => {
    const headers = ['GET /api HTTP/1.1\r\n', 'Host: 127.0.0.1\r\n', ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: y\r\n`)];
    const { openMs, received } = await dribble('127.0.0.2', headers, 250);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('"code":"request_timeout"');
    expect(openMs).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000 - 100);
    // The bound plus Node's check interval (1 s), with room for a busy machine.
    expect(openMs).toBeLessThan(TIMEOUT_SECONDS * 1000 + 2_500);
  });

  it('answer 408 and close a connection whose body comes too slowly', { timeout: 30_000 }, async () => {
    const body = JSON.stringify({ email: 'slow@example.test', password: 'x'.repeat(40) });
    const head = `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { openMs, received } = await dribble('127.0.0.3', [head, ...body.match(/.{1,2}/g)!], 250);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(openMs).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000 - 100);
    expect(openMs).toBeLessThan(TIMEOUT_SECONDS * 1000 + 2_500);
  });

  it('leave a log stream and a CDP WebSocket open well past the timeout', { timeout: 90_000 }, async () => {
    const owner = await registerUser(stack);
    const project = await createProject(stack, owner.token);
    const as = { token: owner.token };
    const session = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'long-lived' }, as);
    expect(session.status, session.text).toBe(200);
    const started = await stack.http.post(`/${project.slug}/api/sessions/${session.body.id}/start`, undefined, as);
    expect(started.status, started.text).toBe(200);

    const stream = await fetch(`${stack.url}/${project.slug}/api/sessions/${session.body.id}/${started.body.id}/logs`, {
      headers: { accept: 'text/event-stream', authorization: `Bearer ${owner.token}` },
    });
    expect(stream.status).toBe(200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let streamEnded = false;
    void (async () => {
      for (;;) if ((await reader.read()).done) break;
      streamEnded = true;
    })().catch(() => {
      streamEnded = true;
    });

    const cdp = new WebSocket(started.body.remoteUrl as string);
    await new Promise((resolve, reject) => {
      cdp.once('open', resolve);
      cdp.once('error', reject);
    });
    let cdpClosed = false;
    cdp.once('close', () => {
      cdpClosed = true;
    });

    await sleep((TIMEOUT_SECONDS + 3) * 1000);
    expect(streamEnded, 'the log stream is still open').toBe(false);
    expect(cdpClosed, 'the CDP WebSocket is still open').toBe(false);
    const version = await new Promise<{ id: number; result?: { product?: string } }>((resolve) => {
      cdp.on('message', (data) => {
        const message = JSON.parse(String(data));
        if (message.id === 1) resolve(message);
      });
      cdp.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' }));
    });
    expect(version.result?.product).toMatch(/Chrome/);
    cdp.close();
    await reader.cancel();
  });
});

describe('the connection cap per client', () => {
  it('resets connections beyond the cap while the earlier ones keep working, per address', { timeout: 30_000 }, async () => {
    const held = [];
    for (let i = 0; i < CAP; i++) {
      const client = await connect('127.0.0.4');
      expect(await client.get('/api')).toBe(200);
      held.push(client);
    }

    const extra = await connect('127.0.0.4');
    expect(await extra.get('/api'), 'one over the cap gets no answer').toBe(0);
    expect(extra.received()).toBe('');
    expect(extra.socket.destroyed).toBe(true);

    // The connections it already holds still serve, and another address is counted apart.
    for (const client of held) expect(await client.get('/api')).toBe(200);
    const neighbour = await connect('127.0.0.5');
    expect(await neighbour.get('/api')).toBe(200);

    // A closed connection frees its place.
    const [first] = held.splice(0, 1);
    first?.socket.end();
    await first?.closed;
    await sleep(100);
    const again = await connect('127.0.0.4');
    expect(await again.get('/api')).toBe(200);

    for (const client of [...held, neighbour, again]) client.socket.destroy();
  });

  it('does not count an exempt address or subnet', { timeout: 30_000 }, async () => {
    for (const from of ['127.0.0.9', '127.0.1.7']) {
      const clients = [];
      for (let i = 0; i < CAP + 2; i++) {
        const client = await connect(from);
        expect(await client.get('/api'), `${from} #${i + 1}`).toBe(200);
        clients.push(client);
      }
      for (const client of clients) client.socket.destroy();
    }
  });
});
