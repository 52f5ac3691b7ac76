import { lookup } from 'node:dns/promises';
import http from 'node:http';
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { EgressPolicy } from '../../../net/egressPolicy.ts';

/**
 * The egress proxy of one browser: Chromium is launched with it as its only proxy (loopback
 * included), so every connection the browser makes — navigations, subresources, fetch and XHR,
 * WebSockets, service workers, downloads — is a request here. It resolves names itself, asks the
 * policy (server/net/egressPolicy.ts) about every address, connects to the address it checked
 * (no second lookup to rebind), and chains to the session's own proxy when there is one, which is
 * checked the same way. A refused connection fails in the page as a network error, and is reported
 * through `onBlocked` (the browser's log).
 */

export type UpstreamProxy = { server: string; username?: string; password?: string };

export type BlockedConnection = { host: string; port: number; reason: string };

type Options = {
  /** null: every destination is allowed (BROWSER_EGRESS_POLICY=open; in the sandbox the proxy is still the only way out). */
  policy: EgressPolicy | null;
  upstream: UpstreamProxy | null;
  /** Listen on this Unix socket (a sandboxed browser's way out) instead of a loopback port. */
  socketPath?: string;
};

class Blocked extends Error {}

const CONNECT_TIMEOUT_MS = 15_000;

/** Hop-by-hop headers of the browser's request that go no further. */
const hopHeaders = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

export class EgressProxy {
  readonly #server: http.Server;
  readonly #options: Options;
  readonly #sockets = new Set<Socket>();
  /** Told of every refused connection; set once the browser it serves has a log. */
  onBlocked: (what: BlockedConnection) => void = () => {};

  private constructor(options: Options) {
    this.#options = options;
    this.#server = http.createServer((req, res) => {
      this.#forward(req, res).catch(() => req.socket.destroy());
    });
    this.#server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
      this.#tunnel(req, client, head).catch(() => client.destroy());
    });
    this.#server.on('upgrade', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
      this.#upgrade(req, client, head).catch(() => client.destroy());
    });
    this.#server.on('connection', (socket: Socket) => {
      // A browser that goes away mid-request resets its sockets: that ends them, nothing more.
      socket.on('error', () => socket.destroy());
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#server.on('clientError', (_error, socket) => socket.destroy());
  }

  static async start(options: Options) {
    const proxy = new EgressProxy(options);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      if (options.socketPath) proxy.#server.listen(options.socketPath, () => resolve());
      else proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** What Chromium is launched with. */
  get server() {
    const address = this.#server.address() as { port: number };
    return `http://127.0.0.1:${address.port}`;
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The addresses `host` stands for, checked; the first is where the connection goes. */
  async #resolve(host: string, port: number): Promise<string> {
    const bare = host.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(bare)) addresses = [bare];
    else {
      try {
        addresses = (await lookup(bare, { all: true, verbatim: true })).map((entry) => entry.address);
      } catch {
        throw new Error(`cannot resolve ${bare}`);
      }
    }
    const decision = this.#options.policy?.check(bare, port, addresses) ?? { allowed: true as const };
    if (!decision.allowed) {
      this.onBlocked({ host: bare, port, reason: decision.reason });
      throw new Blocked(decision.reason);
    }
    return addresses[0] as string;
  }

  /**
   * A connection to the session's proxy, which is subject to the policy like any destination; the
   * destination too, where it is an address (a name is the proxy's to resolve).
   */
  async #toUpstream(upstream: UpstreamProxy, host: string, port: number) {
    const url = new URL(upstream.server);
    const upstreamPort = Number(url.port) || (url.protocol === 'https:' ? 443 : url.protocol === 'socks5:' ? 1080 : 80);
    const proxyAddress = await this.#resolve(url.hostname, upstreamPort);
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare)) await this.#resolve(bare, port);
    const socket = await connectTo(proxyAddress, upstreamPort, url.protocol === 'https:' ? url.hostname : undefined);
    return { socket, protocol: url.protocol, bare };
  }

  /** A raw connection to `host:port`, through the session's proxy when it has one. */
  async #open(host: string, port: number): Promise<Socket> {
    const upstream = this.#options.upstream;
    if (!upstream) return connectTo(await this.#resolve(host, port), port);
    const { socket, protocol, bare } = await this.#toUpstream(upstream, host, port);
    if (protocol === 'socks5:') return socks5(socket, bare, port);
    const authority = isIP(bare) === 6 ? `[${bare}]:${port}` : `${bare}:${port}`;
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${proxyAuthorization(upstream)}\r\n`);
    const status = await readStatus(socket);
    if (status !== 200) {
      socket.destroy();
      throw new Error(`the session's proxy answered ${status} to CONNECT`);
    }
    return socket;
  }

  async #tunnel(req: http.IncomingMessage, client: Socket, head: Buffer) {
    const { host, port } = authorityOf(req.url ?? '', 443);
    let target: Socket;
    try {
      target = await this.#open(host, port);
    } catch (error) {
      client.end(
        error instanceof Blocked
          ? 'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n'
          : 'HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) target.write(head);
    splice(client, target);
  }

  /** A plain-HTTP request in absolute form (`GET http://host/path`). */
  async #forward(req: http.IncomingMessage, res: http.ServerResponse) {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400).end();
      return;
    }
    const port = Number(url.port) || 80;
    const headers = { ...req.headers };
    for (const name of hopHeaders) delete headers[name];
    const upstream = this.#options.upstream;
    let outgoing: http.ClientRequest;
    try {
      if (upstream && !upstream.server.startsWith('socks5:')) {
        // An HTTP proxy takes the absolute form, with its credentials.
        const { socket } = await this.#toUpstream(upstream, url.hostname, port);
        const auth = upstream.username ? { 'proxy-authorization': basic(upstream) } : {};
        outgoing = http.request({
          method: req.method,
          path: url.href,
          headers: { ...headers, ...auth },
          createConnection: () => socket,
        });
      } else {
        const socket = await this.#open(url.hostname, port);
        outgoing = http.request({
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers,
          createConnection: () => socket,
        });
      }
    } catch {
      // Refused or unreachable: the page sees a network error, not an answer.
      req.socket.destroy();
      return;
    }
    outgoing.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    });
    outgoing.on('error', () => req.socket.destroy());
    req.pipe(outgoing);
  }

  /** A WebSocket (or other upgrade) asked for in absolute form. */
  async #upgrade(req: http.IncomingMessage, client: Socket, head: Buffer) {
    const url = new URL(req.url ?? '');
    const port = Number(url.port) || 80;
    let target: Socket;
    try {
      target = await this.#open(url.hostname, port);
    } catch {
      client.destroy();
      return;
    }
    const lines = [`${req.method} ${url.pathname}${url.search} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] as string;
      if (/^proxy-/i.test(name)) continue;
      lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    target.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) target.write(head);
    splice(client, target);
  }
}

function authorityOf(authority: string, defaultPort: number) {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  if (!match) throw new Error(`not an authority: ${authority}`);
  return { host: match[1] as string, port: match[2] ? Number(match[2]) : defaultPort };
}

/** A TCP connection to `address:port`, TLS when a `servername` is given (an https:// proxy). */
function connectTo(address: string, port: number, servername?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket: Socket = servername
      ? tlsConnect({ host: address, port, servername: isIP(servername) ? undefined : servername, timeout: CONNECT_TIMEOUT_MS })
      : tcpConnect({ host: address, port, timeout: CONNECT_TIMEOUT_MS });
    socket.once(servername ? 'secureConnect' : 'connect', () => {
      socket.setTimeout(0);
      resolve(socket);
    });
    socket.once('timeout', () => socket.destroy(new Error('connect timed out')));
    // Before the connection: the caller's failure; after it, whoever pipes it ends it.
    socket.on('error', (error) => {
      reject(error);
      socket.destroy();
    });
  });
}

function basic(upstream: UpstreamProxy) {
  return `Basic ${Buffer.from(`${upstream.username ?? ''}:${upstream.password ?? ''}`).toString('base64')}`;
}

function proxyAuthorization(upstream: UpstreamProxy) {
  return upstream.username ? `Proxy-Authorization: ${basic(upstream)}\r\n` : '';
}

/** The status code of an HTTP response head on `socket`; what follows the head stays unread. */
function readStatus(socket: Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buffered.length > 16_384) fail(new Error('the proxy answered an over-long head'));
        return;
      }
      socket.off('data', onData);
      socket.off('error', fail);
      const rest = buffered.subarray(end + 4);
      if (rest.length) socket.unshift(rest);
      resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(buffered.toString('latin1'))?.[1] ?? 0));
    };
    const fail = (error: Error) => {
      socket.off('data', onData);
      reject(error);
    };
    socket.on('data', onData);
    socket.once('error', fail);
  });
}

/** A SOCKS5 CONNECT without authentication (the only kind Chromium's own SOCKS5 support sends). */
async function socks5(socket: Socket, host: string, port: number): Promise<Socket> {
  const read = (length: number) =>
    new Promise<Buffer>((resolve, reject) => {
      const take = () => {
        const chunk = socket.read(length) as Buffer | null;
        if (chunk) {
          socket.off('readable', take);
          socket.off('error', reject);
          resolve(chunk);
        }
      };
      socket.on('readable', take);
      socket.once('error', reject);
      take();
    });
  socket.write(Buffer.from([5, 1, 0]));
  const greeting = await read(2);
  if (greeting[0] !== 5 || greeting[1] !== 0) throw new Error('the SOCKS5 proxy wants authentication');
  const family = isIP(host);
  const address =
    family === 4
      ? Buffer.from([1, ...host.split('.').map(Number)])
      : family === 6
        ? Buffer.concat([Buffer.from([4]), ipv6Bytes(host)])
        : Buffer.concat([Buffer.from([3, Buffer.byteLength(host)]), Buffer.from(host)]);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), address, Buffer.from([port >> 8, port & 0xff])]));
  const reply = await read(4);
  if (reply[1] !== 0) throw new Error(`the SOCKS5 proxy refused the connection (${reply[1]})`);
  const boundLength = reply[3] === 1 ? 4 : reply[3] === 4 ? 16 : (await read(1))[0];
  await read((boundLength as number) + 2);
  return socket;
}

function ipv6Bytes(address: string) {
  const [head = '', tail = ''] = address.split('::');
  const parts = (text: string) => (text ? text.split(':') : []);
  const groups = [...parts(head), ...Array(8 - parts(head).length - parts(tail).length).fill('0'), ...parts(tail)];
  return Buffer.from(groups.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]));
}

/** Both ways until either side ends. */
function splice(a: Socket, b: Socket) {
  a.pipe(b);
  b.pipe(a);
  const close = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', close);
  b.on('error', close);
  a.on('close', close);
  b.on('close', close);
}
