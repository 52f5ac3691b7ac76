import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The low end of the kernel's ephemeral range (the ports it hands out by itself), 32768 where unreadable. */
function ephemeralLow() {
  try {
    const low = Number.parseInt(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0] ?? '', 10);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const handedOut = new Set<number>();

/**
 * A port nothing listens on, for a server started a moment later. It is picked below the kernel's
 * ephemeral range: a port from `listen(0)` could be handed by the kernel to another process (an
 * outgoing connection, or a Temporal dev server's own random ports) between this pick and its use,
 * and that server would then fail to bind, or another's port would look like its own.
 */
export async function freePort(host = '127.0.0.1') {
  const high = ephemeralLow() - 1;
  const low = Math.max(1024, high - 12_000);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port)) continue;
    // Held before the check: a pick made meanwhile by another call here must not get it too.
    handedOut.add(port);
    if (!(await portInUse(port, host))) return port;
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}

/** Whether something already listens on `port` of `host` (a listen here fails with EADDRINUSE). */
export function portInUse(port: number, host = '127.0.0.1') {
  return new Promise<boolean>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}
