import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * What the tests read off a sandboxed browser from the host's /proc: its processes, their users
 * and namespaces, and the connections to its CDP socket.
 */

/** The Unix socket a browser's DevTools pipe is served at, from its `cdpEndpoint` (`ws+unix://<socket>:/cdp`). */
export function cdpSocketOf(cdpEndpoint: string) {
  const match = /^ws\+unix:\/\/(.+):\/cdp$/.exec(cdpEndpoint);
  if (!match) throw new Error(`not a CDP pipe socket: ${cdpEndpoint}`);
  return match[1] as string;
}

/** Connected sockets of `socketPath` as /proc/net/unix lists them (an accepted connection carries its listener's path). */
export function connectionsTo(socketPath: string) {
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[7] === socketPath && fields[5] === '03').length;
}

/** `pid` and every process below it. */
export function processTree(pid: number) {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const tree: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const next = queue.shift() as number;
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return tree;
}

export type ProcessFacts = { pid: number; command: string; uid: number; namespaces: Record<string, string> };

/** Who a process runs as and in which namespaces, or null once it has exited. */
export function processFacts(pid: number): ProcessFacts | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] as string;
    const namespaces: Record<string, string> = {};
    for (const kind of ['user', 'mnt', 'net', 'pid', 'ipc', 'uts']) namespaces[kind] = readlinkSync(`/proc/${pid}/ns/${kind}`);
    return { pid, command, uid, namespaces };
  } catch {
    return null;
  }
}

/** The processes of a browser that run Chromium itself (browser, renderers, utilities). */
export function chromiumProcesses(pid: number) {
  return processTree(pid)
    .map(processFacts)
    .filter((facts): facts is ProcessFacts => facts !== null && /chromium|chrome/.test(facts.command));
}
