import http from 'node:http';
import os from 'node:os';
import { EgressProxy } from '../../server/browsers/host/egressProxy.ts';
import { EgressPolicy, parseAllowedDestinations } from '../../server/net/egressPolicy.ts';

/**
 * Run by test/egress-namespace.test.ts inside a network namespace of its own (`unshare -rn`),
 * where nothing but loopback exists: a browser's egress proxy, under the restricted policy with
 * the exception `127.0.0.9` (where nothing listens), is asked to CONNECT to each authority given
 * (as Chromium asks it) and to fetch it in absolute form. Prints, as JSON, each answer's status
 * and what the proxy reported as blocked. A refusal is 403 and a report; a connection the policy
 * lets through fails with 502, since nothing answers and no packet can leave the namespace.
 */

const interfaces = Object.entries(os.networkInterfaces()).filter(([, entries]) => entries?.some((entry) => !entry.internal));
if (interfaces.length) {
  console.error(`not in an empty network namespace: ${interfaces.map(([name]) => name).join(', ')}`);
  process.exit(2);
}

const authorities = process.argv.slice(2);
const proxy = await EgressProxy.start({ policy: new EgressPolicy(parseAllowedDestinations('127.0.0.9') as []), upstream: null });
const blocked: string[] = [];
proxy.onBlocked = ({ host, port, reason }) => blocked.push(`${host}:${port}: ${reason}`);
const { port } = new URL(proxy.server);

function connect(authority: string) {
  return new Promise<number>((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'CONNECT', path: authority });
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
    const request = http.request({ host: '127.0.0.1', port, path: `http://${authority}/`, headers: { host: authority } });
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
console.log(JSON.stringify({ results, blocked }));
