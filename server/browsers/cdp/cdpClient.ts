import { EventEmitter } from 'node:events';
import WebSocket from 'ws';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/**
 * A minimal Chrome DevTools Protocol client over one WebSocket, for what the api does itself
 * (live view screencast, cookie capture). Events are emitted as `<method>` with (params, sessionId).
 */
export class CdpClient extends EventEmitter {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;

  private constructor(socket: WebSocket) {
    super();
    this.#socket = socket;
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as {
        id?: number;
        method?: string;
        params?: unknown;
        sessionId?: string;
        result?: unknown;
        error?: { message: string };
      };
      if (message.id !== undefined) {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.error) pending?.reject(new Error(message.error.message));
        else pending?.resolve(message.result);
      } else if (message.method) {
        this.emit(message.method, message.params, message.sessionId);
      }
    });
    socket.on('close', () => {
      this.#closed = true;
      for (const pending of this.#pending.values()) pending.reject(new Error('CDP connection closed'));
      this.#pending.clear();
      this.emit('close');
    });
    socket.on('error', () => {
      // 'close' follows and settles everything
    });
  }

  static connect(endpoint: string, timeoutMs = 10_000) {
    return new Promise<CdpClient>((resolve, reject) => {
      const socket = new WebSocket(endpoint, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error('CDP connection timed out'));
      }, timeoutMs);
      socket.once('open', () => {
        clearTimeout(timer);
        resolve(new CdpClient(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  get closed() {
    return this.#closed;
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('CDP connection closed'));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: (value) => resolve(value as T), reject });
      this.#socket.send(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }));
    });
  }

  close() {
    if (!this.#closed) this.#socket.close();
  }
}
