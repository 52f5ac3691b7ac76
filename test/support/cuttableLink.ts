import net from 'node:net';
import { freePort } from '../../server/infra/ports.ts';

/**
 * PostgreSQL going away, as one process sees it: its database URL goes through a link the test
 * can cut (every connection dropped, new ones refused) and restore, on the port it had. The shared
 * PostgreSQL of the test run keeps serving everything else.
 */
export function cuttableLink(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const open = async () => {
    // Below the kernel's own range: a port it handed out could be another connection's by the
    // time the link is restored on it.
    if (port === 0) port = await freePort();
    await new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        if (!server?.listening) drop();
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  };
  return {
    open,
    get port() {
      return port;
    },
    async cut() {
      const closing = new Promise((resolve) => server?.close(resolve));
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await closing;
    },
  };
}

/** `url` (a database URL on 127.0.0.1:5432) through `link`. */
export function throughLink(url: string, link: { port: number }) {
  return url.replace(/@127\.0\.0\.1:5432\//, `@127.0.0.1:${link.port}/`);
}
