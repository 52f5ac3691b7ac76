import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { measureProcessTree } from '../../server/browsers/host/chromium/processes.ts';

it('a process tree keeps the CPU time of children that exited', async () => {
  // sh runs a child that burns half a second of CPU (not of wall time: the cores are shared) and
  // exits; sh reaps it and waits on.
  const burn = `node -e "while (process.cpuUsage().user + process.cpuUsage().system < 500000);"`;
  const shell = spawn('sh', ['-c', `${burn}; echo burnt; sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    await new Promise<void>((resolve) => shell.stdout.once('data', () => resolve()));
    await sleep(50);
    const tree = measureProcessTree(shell.pid as number);
    // The child is gone: its seconds are counted through sh's cutime/cstime.
    expect(tree?.cpuSeconds).toBeGreaterThanOrEqual(0.45);
  } finally {
    shell.kill('SIGKILL');
  }
});
