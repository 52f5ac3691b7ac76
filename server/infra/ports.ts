import net from 'node:net';

export function freePort() {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something already listens on `port` of `host` (a listen here fails with EADDRINUSE). */
export function portInUse(port: number, host = '127.0.0.1') {
  return new Promise<boolean>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}
