import { readFileSync } from 'node:fs';
import net from 'node:net';
import { expect, it } from 'vitest';
import { freePort, portInUse } from '../../server/infra/ports.ts';

it('a port picked for a server to come lies below the ports the kernel hands out itself, and is never picked twice', async () => {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
  expect(new Set(ports).size).toBe(ports.length);
  for (const port of ports) {
    expect(port).toBeLessThan(low as number);
    expect(port).toBeGreaterThanOrEqual(1024);
  }
  // What the kernel gives a listen on port 0 is in its own range, so never one of these.
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kernels = (server.address() as net.AddressInfo).port;
  expect(kernels).toBeGreaterThanOrEqual(low as number);
  expect(await portInUse(kernels)).toBe(true);
  await new Promise((resolve) => server.close(resolve));
});
