import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { EgressProxy } from '../../server/browsers/host/egress/egressProxy.ts';
import { EgressPolicy, parseAllowedDestinations } from '../../server/net/egressPolicy.ts';

/**
 * Run by test/browsers/host/egress-namespace.test.ts inside a network namespace of its own (`unshare -rn`),
 * with no interface up, not even loopback: a browser's egress proxy, under the restricted policy
 * with the exception `127.0.0.9`, is asked to CONNECT to each authority given (as Chromium asks
 * it) and to fetch it in absolute form. Prints, as JSON, each answer's status and what the proxy
 * reported as blocked. A refusal is 403 and a report; a connection the policy lets through fails
 * with 502, since there is no route anywhere and no packet can leave the namespace.
 */

const interfaces = Object.entries(os.networkInterfaces()).filter(([, entries]) => entries?.some((entry) => !entry.internal));
if (interfaces.length) {
  console.error(`not in an empty network namespace: ${interfaces.map(([name]) => name).join(', ')}`);
  process.exit(2);
}

const authorities = process.argv.slice(2);
// On a Unix socket, as in the sandbox: loopback stays down, and nothing needs to raise it.
const folder = mkdtempSync(path.join(os.tmpdir(), 'egress-probe-'));
const socketPath = path.join(folder, 'proxy.sock');
const proxy = await EgressProxy.start({
  policy: new EgressPolicy(parseAllowedDestinations('127.0.0.9') as []),
  upstream: null,
  socketPath,
});
const blocked: string[] = [];
proxy.onBlocked = ({ host, port, reason }) => blocked.push(`${host}:${port}: ${reason}`);

function connect(authority: string) {
  return new Promise<number>((resolve) => {
    const request = http.request({ socketPath, method: 'CONNECT', path: authority });
    request.on('connect', (answer, socket) => {
      socket.destroy();
      resolve(answer.statusCode ?? 0);
    });
    request.on('error', () => resolve(0));
    request.end();
  });
}

function get(authority: string) {
  return new Promise<number | 'reset'>((resolve) => {
    const request = http.request({ socketPath, path: `http://${authority}/`, headers: { host: authority } });
    request.on('response', (answer) => {
      answer.resume();
      resolve(answer.statusCode ?? 0);
    });
    // The proxy drops a refused plain-HTTP request rather than answering it.
    request.on('error', () => resolve('reset'));
    request.end();
  });
}

const results: Record<string, { connect: number; get: number | 'reset' }> = {};
for (const authority of authorities) results[authority] = { connect: await connect(authority), get: await get(authority) };
await proxy.close();
rmSync(folder, { recursive: true, force: true });
console.log(JSON.stringify({ results, blocked }));
