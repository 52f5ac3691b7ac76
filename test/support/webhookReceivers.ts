import dgram from 'node:dgram';
import http from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * What webhook tests point endpoints at: an HTTP receiver that keeps each request (headers and
 * the raw body, as a verifier needs it) and answers what the test says; and a small DNS server
 * whose answer a test changes between the endpoint's creation and its delivery.
 */

/** The receiver's own loopback address, which the webhook test stack allows. */
export const RECEIVER_HOST = '127.0.0.77';

export type ReceivedWebhook = { path: string; headers: Record<string, string>; body: string };

export async function startWebhookReceiver(host = RECEIVER_HOST, port = 0) {
  const received: ReceivedWebhook[] = [];
  /** Status codes to answer, per path, in order; once used up, 200. `drip`: a byte every 300 ms, never ending. */
  const scripts = new Map<string, (number | 'drip')[]>();
  const drips = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      const status = scripts.get(path)?.shift() ?? 200;
      if (status === 'drip') {
        res.writeHead(200);
        const drip = setInterval(() => res.write('.'), 300);
        drips.add(drip);
        res.on('close', () => {
          clearInterval(drip);
          drips.delete(drip);
        });
        return;
      }
      res.statusCode = status;
      if (status >= 300 && status < 400) res.setHeader('location', `http://${RECEIVER_HOST}/elsewhere`);
      res.end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://${host}:${address.port}${path}`,
    port: address.port,
    received,
    at: (path: string) => received.filter((request) => request.path === path),
    answer: (path: string, statuses: (number | 'drip')[]) => scripts.set(path, [...statuses]),
    close: () =>
      new Promise<void>((resolve) => {
        for (const drip of drips) clearInterval(drip);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A DNS server answering for the names in `records`, which the test may change: A queries for an
 * IPv4 record, AAAA queries for an IPv6 one.
 */
export async function startDnsServer(host = '127.0.0.78') {
  const records = new Map<string, string>();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (query.length < 12) return;
    // The question: labels, then type and class.
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset] as number;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1);
    const record = records.get(labels.join('.').toLowerCase());
    const family = record && isIP(record) === 6 ? 28 : 1;
    const address = type === family ? record : undefined;
    const known = [...records.keys()].includes(labels.join('.').toLowerCase());
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
    // A response, recursion available; NXDOMAIN for a name it does not know.
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address ? 1 : 0, 6);
    const parts = [header, query.subarray(12, questionEnd)];
    if (address) {
      const bytes = ipaddr.parse(address).toByteArray();
      const answer = Buffer.alloc(12 + bytes.length);
      answer.writeUInt16BE(0xc00c, 0);
      answer.writeUInt16BE(type, 2);
      answer.writeUInt16BE(1, 4);
      answer.writeUInt32BE(0, 6);
      answer.writeUInt16BE(bytes.length, 10);
      Buffer.from(bytes).copy(answer, 12);
      parts.push(answer);
    }
    socket.send(Buffer.concat(parts), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const { port } = socket.address();
  return {
    server: `${host}:${port}`,
    records,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
