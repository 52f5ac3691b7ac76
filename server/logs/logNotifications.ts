import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import { LOG_NOTIFY_CHANNEL } from './logWriter.ts';

/**
 * One LISTEN connection per api process, fanned out by stream name. Writers NOTIFY with the
 * stream, so any replica can serve any live log stream.
 */
export class LogNotifications {
  readonly #emitter = new EventEmitter();
  readonly #url: string;
  readonly #log: Logger;
  #client?: Promise<pg.Client>;

  constructor(url: string, log: Logger) {
    this.#url = url;
    this.#log = log;
    this.#emitter.setMaxListeners(0);
  }

  async subscribe(stream: string, onEntry: () => void) {
    await this.#connect();
    this.#emitter.on(stream, onEntry);
    return () => {
      this.#emitter.off(stream, onEntry);
    };
  }

  #connect() {
    this.#client ??= (async () => {
      const client = new pg.Client({ connectionString: this.#url });
      client.on('notification', (message) => {
        if (message.payload) this.#emitter.emit(message.payload);
      });
      client.on('error', (error) => {
        this.#log.warn({ err: error }, 'log notification connection lost; reconnecting on next subscriber');
        this.#client = undefined;
      });
      await client.connect();
      await client.query(`LISTEN ${LOG_NOTIFY_CHANNEL}`);
      return client;
    })();
    return this.#client;
  }

  async close() {
    const client = await this.#client?.catch(() => undefined);
    this.#client = undefined;
    await client?.end().catch(() => {});
  }
}
