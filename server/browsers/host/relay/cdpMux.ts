import { chmodSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';

/**
 * The DevTools connection of one browser: Chromium speaks CDP over a pipe to its host
 * (`--remote-debugging-pipe`, file descriptors 3 and 4) and opens no port at all. This serves
 * that one pipe to any number of WebSocket clients, at a Unix socket only the host can open
 * (`ws+unix://<socket>:/cdp`): the host's own Playwright, and the relay's connections from the
 * api (remoteUrl holders through the guard, live view, cookie capture).
 *
 * Each client gets a browser session of its own (`Target.attachToBrowserTarget`), so Chromium
 * keeps each client's auto-attach, discovery and contexts apart, as it does for separate DevTools
 * WebSockets. A client's messages without a session go to its browser session; messages naming a
 * session go through only if that session is the client's (attached from its own sessions); ids
 * are renumbered on the way in and restored on the way out, and every answer and event reaches
 * only the client whose session it concerns.
 */

type Message = { id?: number; method?: string; params?: Record<string, unknown>; sessionId?: string; result?: unknown; error?: unknown };

type Client = { socket: WebSocket; browserSession: string; sessions: Set<string> };

/**
 * The host's own watch on its browser (server/browsers/host/downloads/): `command` sees, and may
 * rewrite in place, every client's command before it reaches the browser; `answered` sees the
 * result of each; `event` gets the root session's events (the host's own, answered to no client).
 */
export type MuxHooks = {
  command?(message: { method?: string; params?: Record<string, unknown> }): void;
  answered?(method: string, result: unknown): void;
  event?(method: string, params: Record<string, unknown>): void;
};

/** How long the browser may take to answer the first command of a connection. */
const ATTACH_TIMEOUT_MS = 30_000;

export class CdpMux {
  readonly #write: Writable;
  readonly #server: http.Server;
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
  readonly #socketPath: string;
  /** Commands in flight: the id sent to the browser → who asked, under which id. */
  readonly #pending = new Map<number, { client: Client | null; id: number; method?: string; resolve?: (message: Message) => void }>();
  /** Every session a client holds → that client. */
  readonly #owners = new Map<string, Client>();
  #nextId = 1;
  #closed = false;
  hooks: MuxHooks = {};
  #buffered: Buffer[] = [];

  private constructor(read: Readable, write: Writable, socketPath: string) {
    this.#write = write;
    this.#socketPath = socketPath;
    read.on('data', (chunk: Buffer) => this.#receive(chunk));
    read.on('close', () => this.#shutDown());
    read.on('error', () => this.#shutDown());
    write.on('error', () => this.#shutDown());
    this.#server = http.createServer((_req, res) => res.writeHead(404).end());
    this.#server.on('upgrade', (req, socket, head) => {
      if (this.#closed || new URL(req.url ?? '/', 'http://cdp').pathname !== '/cdp') return socket.destroy();
      this.#wss.handleUpgrade(req, socket, head, (ws) => {
        this.#accept(ws).catch(() => ws.terminate());
      });
    });
  }

  /** Serves the pipe `read`/`write` (Chromium's fds 4 and 3) at the Unix socket `socketPath`. */
  static async serve(read: Readable, write: Writable, socketPath: string) {
    rmSync(socketPath, { force: true });
    const mux = new CdpMux(read, write, socketPath);
    await new Promise<void>((resolve, reject) => {
      mux.#server.once('error', reject);
      mux.#server.listen(socketPath, () => resolve());
    });
    // The host's user alone may connect (writing to a socket is connecting to it).
    chmodSync(socketPath, 0o600);
    return mux;
  }

  /** Where a WebSocket client connects: `ws` (Playwright's and the relay's client) opens it. */
  get endpoint() {
    return `ws+unix://${this.#socketPath}:/cdp`;
  }

  /** One command of the host's own, on the browser's root session (readiness, `Browser.close`). */
  command(method: string, params: Record<string, unknown> = {}, timeoutMs = ATTACH_TIMEOUT_MS): Promise<Message> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error('the browser closed its DevTools pipe'));
      const id = this.#nextId++;
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`the browser did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        client: null,
        id,
        resolve: (message) => {
          clearTimeout(timer);
          if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
          else resolve(message);
        },
      });
      this.#send({ id, method, params });
    });
  }

  async close() {
    this.#shutDown();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    rmSync(this.#socketPath, { force: true });
  }

  async #accept(socket: WebSocket) {
    const queued: WebSocket.RawData[] = [];
    const early = (data: WebSocket.RawData) => queued.push(data);
    socket.on('message', early);
    const attached = await this.command('Target.attachToBrowserTarget');
    const browserSession = (attached.result as { sessionId: string }).sessionId;
    const client: Client = { socket, browserSession, sessions: new Set([browserSession]) };
    this.#owners.set(browserSession, client);
    const gone = () => {
      for (const session of client.sessions) this.#owners.delete(session);
      if (!this.#closed) this.#send({ id: this.#nextId++, method: 'Target.detachFromTarget', params: { sessionId: browserSession } });
    };
    socket.on('close', gone);
    socket.on('error', () => socket.terminate());
    socket.off('message', early);
    socket.on('message', (data) => this.#fromClient(client, data));
    for (const data of queued) this.#fromClient(client, data);
    if (socket.readyState !== WebSocket.OPEN) gone();
  }

  #fromClient(client: Client, data: WebSocket.RawData) {
    let message: Message;
    try {
      message = JSON.parse(String(data));
    } catch {
      return this.#toClient(client, { error: { code: -32700, message: 'Message must be valid JSON' } });
    }
    if (!message || typeof message !== 'object' || Array.isArray(message) || typeof message.id !== 'number') {
      return this.#toClient(client, { error: { code: -32600, message: 'Message must be an object with a numeric id' } });
    }
    const sessionId = message.sessionId ?? client.browserSession;
    if (!client.sessions.has(sessionId)) {
      return this.#toClient(client, {
        id: message.id,
        sessionId: message.sessionId,
        error: { code: -32001, message: `Session with given id not found.` },
      });
    }
    const id = this.#nextId++;
    if (typeof message.method === 'string') this.hooks.command?.(message);
    this.#pending.set(id, { client, id: message.id, method: message.method });
    this.#send({ ...message, id, sessionId });
  }

  #receive(chunk: Buffer) {
    let end = chunk.indexOf(0);
    if (end < 0) {
      this.#buffered.push(chunk);
      return;
    }
    let start = 0;
    while (end >= 0) {
      const piece = chunk.subarray(start, end);
      const whole = this.#buffered.length ? Buffer.concat([...this.#buffered, piece]) : piece;
      this.#buffered = [];
      this.#dispatch(whole);
      start = end + 1;
      end = chunk.indexOf(0, start);
    }
    if (start < chunk.length) this.#buffered.push(chunk.subarray(start));
  }

  #dispatch(raw: Buffer) {
    let message: Message;
    try {
      message = JSON.parse(raw.toString('utf8'));
    } catch {
      return;
    }
    if (typeof message.id === 'number') {
      const asked = this.#pending.get(message.id);
      if (!asked) return;
      this.#pending.delete(message.id);
      if (!asked.client) return asked.resolve?.(message);
      // A flat attach answers with the new session: it is the asker's.
      const attached = (message.result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof attached === 'string') this.#own(asked.client, attached);
      if (asked.method && message.result) this.hooks.answered?.(asked.method, message.result);
      return this.#toClient(asked.client, { ...message, id: asked.id });
    }
    if (!message.sessionId) {
      // The root session's events: the host's own.
      if (message.method) this.hooks.event?.(message.method, message.params ?? {});
      return;
    }
    const client = this.#owners.get(message.sessionId);
    if (!client) return;
    const attached = message.params?.sessionId;
    if (message.method === 'Target.attachedToTarget' && typeof attached === 'string') this.#own(client, attached);
    if (message.method === 'Target.detachedFromTarget' && typeof attached === 'string') {
      client.sessions.delete(attached);
      this.#owners.delete(attached);
    }
    this.#toClient(client, message);
  }

  #own(client: Client, sessionId: string) {
    client.sessions.add(sessionId);
    this.#owners.set(sessionId, client);
  }

  /** The client sees its browser session as the connection's root, as over a DevTools WebSocket. */
  #toClient(client: Client, message: Message) {
    if (client.socket.readyState !== WebSocket.OPEN) return;
    const { sessionId, ...rest } = message;
    client.socket.send(JSON.stringify(sessionId && sessionId !== client.browserSession ? { ...rest, sessionId } : rest));
  }

  #send(message: Message) {
    if (this.#closed) return;
    this.#write.write(`${JSON.stringify(message)}\0`);
  }

  #shutDown() {
    if (this.#closed) return;
    this.#closed = true;
    for (const [, asked] of this.#pending) asked.resolve?.({ error: { message: 'the browser closed its DevTools pipe' } });
    this.#pending.clear();
    for (const client of new Set(this.#owners.values())) client.socket.close();
    this.#owners.clear();
  }
}
