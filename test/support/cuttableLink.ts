import net from 'node:net';

/**
 * PostgreSQL going away, as one process sees it: its database URL goes through a link the test
 * can cut (every connection dropped, new ones refused) and restore, on the port it had. The shared
 * PostgreSQL of the test run keeps serving everything else.
 */
export function cuttableLink(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
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
      const listening = server;
      listening.listen(port, '127.0.0.1', () => {
        port = (listening.address() as net.AddressInfo).port;
        resolve();
      });
    });
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
