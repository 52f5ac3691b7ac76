import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BrowserCgroup,
  BrowserCgroups,
  cgroupLayout,
  joinCommand,
  limitFiles,
  oomKillsIn,
  prepareCgroups,
} from '../../../server/browsers/host/chromium/browserCgroups.ts';
import { ConfigError, parseConfig } from '../../../server/config.ts';
import { capturingLog } from '../../support/capturingLog.ts';

/**
 * Where a host puts its browsers' cgroups and what it writes there (server/browsers/host/chromium/browserCgroups.ts),
 * for both cgroup versions: this machine is v1, so v2's choices are tested on the kernel's texts.
 * test/browsers/sandbox/browser-limits.test.ts tests the limits themselves on real browsers.
 */

const V1_CGROUP = `9:name=systemd:/
8:pids:/
4:memory:/process_api/8e8f
2:cpuacct:/
1:cpu:/
0::/
`;
const V1_MOUNTS = `32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`;
const V2_MOUNTS = '29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n';
const limits = { memoryBytes: 768 * 2 ** 20, diskBytes: 256 * 2 ** 20, pids: 1024, cpuWeight: 100 };

describe('where a host makes its browsers’ cgroups', () => {
  it('cgroup v1: beneath the service’s own group of each controller, as /proc/self/cgroup names it', () => {
    expect(cgroupLayout(V1_CGROUP, V1_MOUNTS)).toEqual({
      version: 1,
      dirs: { memory: '/sys/fs/cgroup/memory/process_api/8e8f', pids: '/sys/fs/cgroup/pids', cpu: '/sys/fs/cgroup/cpu' },
    });
  });

  it('cgroup v1 in a container whose mounts show its own group as their root', () => {
    const mounts =
      '35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n36 31 0:33 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n37 31 0:34 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n';
    const cgroup = '4:memory:/docker/abc\n8:pids:/docker/abc\n1:cpu,cpuacct:/docker/abc\n';
    expect(cgroupLayout(cgroup, mounts)).toEqual({
      version: 1,
      dirs: { memory: '/sys/fs/cgroup/memory', pids: '/sys/fs/cgroup/pids', cpu: '/sys/fs/cgroup/cpu,cpuacct' },
    });
  });

  it('cgroup v2: beneath the service’s unified group; a host alone in its browserflow-host leaf uses the group above', () => {
    expect(cgroupLayout('0::/system.slice/browserflow.service\n', V2_MOUNTS)).toEqual({
      version: 2,
      dir: '/sys/fs/cgroup/system.slice/browserflow.service',
    });
    // Docker with its own cgroup namespace: the container's group is "/".
    expect(cgroupLayout('0::/browserflow-host\n', V2_MOUNTS)).toEqual({ version: 2, dir: '/sys/fs/cgroup' });
  });

  it('says why when neither version’s memory controller is there', () => {
    expect(cgroupLayout('1:name=systemd:/\n', '')).toEqual({ unavailable: expect.stringMatching(/neither/) });
    expect(cgroupLayout('4:memory:/\n', V1_MOUNTS.replace(/.*pids\n/, ''))).toEqual({
      unavailable: 'the pids controller of cgroup v1 is not mounted',
    });
  });
});

describe('what a browser’s cgroup is given', () => {
  it('cgroup v1: the memory limit (and memory plus swap, after it), pids.max and cpu.shares', () => {
    expect(limitFiles(1, limits, () => true)).toEqual([
      { controller: 'memory', file: 'memory.limit_in_bytes', value: String(768 * 2 ** 20) },
      { controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: String(768 * 2 ** 20) },
      { controller: 'pids', file: 'pids.max', value: '1024' },
      { controller: 'cpu', file: 'cpu.shares', value: '1024' },
    ]);
    expect(limitFiles(1, limits, () => false).map((write) => write.file)).not.toContain('memory.memsw.limit_in_bytes');
  });

  it('cgroup v2: memory.max, no swap, the whole group killed together, pids.max and cpu.weight', () => {
    expect(limitFiles(2, { ...limits, cpuWeight: 50 }, () => true)).toEqual([
      { controller: 'unified', file: 'memory.max', value: String(768 * 2 ** 20) },
      { controller: 'unified', file: 'memory.swap.max', value: '0' },
      { controller: 'unified', file: 'memory.oom.group', value: '1' },
      { controller: 'unified', file: 'pids.max', value: '1024' },
      { controller: 'unified', file: 'cpu.weight', value: '50' },
    ]);
  });

  it('reads the kernel’s kills for memory from v1’s memory.oom_control and v2’s memory.events', () => {
    expect(oomKillsIn('oom_kill_disable 0\nunder_oom 0\noom_kill 1\n')).toBe(1);
    expect(oomKillsIn('low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 1\n')).toBe(2);
    expect(oomKillsIn('oom_kill_disable 0\nunder_oom 0\n')).toBe(0);
  });
});

describe('a browser host that cannot bound its browsers', () => {
  const noCgroups = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-cgroups-'));
    writeFileSync(path.join(dir, 'cgroup'), '1:name=systemd:/\n');
    writeFileSync(path.join(dir, 'mountinfo'), '');
    return { cgroup: path.join(dir, 'cgroup'), mountinfo: path.join(dir, 'mountinfo') };
  };

  it('refuses to start, saying why', () => {
    const { log } = capturingLog();
    const start = () => prepareCgroups(limits, '/tmp/bf-browsers', { sandbox: true, log, files: noCgroups() });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/cgroups cannot be made: neither cgroup v1’s memory controller nor cgroup v2 is mounted.*write access/);
  });

  it('with BROWSER_SANDBOX=off runs its browsers unbounded, warning at every start', () => {
    const { log, lines } = capturingLog();
    expect(prepareCgroups(limits, '/tmp/bf-browsers', { sandbox: false, log, files: noCgroups() })).toBeNull();
    expect(lines.filter((line) => line.level === 40 && /BROWSER_SANDBOX=off.*without memory/.test(line.msg))).toHaveLength(1);
  });
});

describe('a browser’s cgroups on this machine', () => {
  const browsersDir = () => mkdtempSync(path.join(os.tmpdir(), 'bf-cgroups-browsers-'));

  it('its first process is in every group before it runs anything, and a host’s next start ends what a crash left', async () => {
    const dir = browsersDir();
    const cgroups = BrowserCgroups.prepare(limits, dir);
    const cgroup = cgroups.create('left-behind');
    const command = joinCommand(cgroup, { command: 'sh', args: ['-c', 'cat /proc/self/cgroup; exec sleep 600'] });
    const child = spawn(command.command, command.args, { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    const said = await new Promise<string>((resolve) => child.stdout.once('data', (chunk) => resolve(String(chunk))));
    // Every controller's line names the browser's group: memory, pids and cpu.
    for (const controller of ['memory', 'pids', 'cpu']) {
      expect(said).toMatch(new RegExp(`^\\d+:[^:]*\\b${controller}\\b[^:]*:.*/browserflow-[0-9a-f]{12}/left-behind/run$`, 'm'));
    }
    expect(cgroup.procsFiles.every((file) => readFileSync(file, 'utf8').includes(String(child.pid)))).toBe(true);

    // The host "crashes" (its browser and groups stay); its next start finds them.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const again = BrowserCgroups.prepare(limits, dir);
    expect(await again.removeLeftovers()).toBe(3);
    await exited;
    expect(cgroup.procsFiles.some((file) => existsSync(file))).toBe(false);
    again.close();
  });

  it('is held to its memory limit: a process past it is killed, and the group says so', async () => {
    const cgroups = BrowserCgroups.prepare({ ...limits, memoryBytes: 64 * 2 ** 20 }, browsersDir());
    const cgroup = cgroups.create('greedy');
    expect(cgroup.outOfMemory()).toBe(false);
    const command = joinCommand(cgroup, { command: 'python3', args: ['-c', 'a = bytearray(256 * 1024 * 1024)'] });
    const child = spawn(command.command, command.args, { stdio: 'ignore' });
    const [, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once('exit', (...end) => resolve(end)));
    expect(signal).toBe('SIGKILL');
    expect(cgroup.outOfMemory()).toBe(true);
    await cgroup.remove();
    cgroups.close();
  });
});

describe('a browser that tries to raise its own limits', () => {
  it('mounting the memory hierarchy from a cgroup namespace of its own and raising every limit it sees, it is still held to its limit', async () => {
    const cgroups = BrowserCgroups.prepare(
      { ...limits, memoryBytes: 64 * 2 ** 20 },
      mkdtempSync(path.join(os.tmpdir(), 'bf-cgroups-browsers-')),
    );
    const cgroup = cgroups.create('raiser');
    // As a browser's sandbox does (bubblewrap --unshare-all), it makes user, mount and cgroup
    // namespaces of its own: the hierarchy it mounts shows its group as the root. It writes the
    // largest limit into every group's memory plus swap, then memory, limit it can reach, then takes 256 MB.
    const raise = `mkdir -p /tmp/bf-raise-$$ && mount -t cgroup -o memory none /tmp/bf-raise-$$ || exit 3
      for d in $(find /tmp/bf-raise-$$ -name memory.limit_in_bytes -exec dirname {} \\;); do
        echo -1 > "$d/memory.memsw.limit_in_bytes"; echo -1 > "$d/memory.limit_in_bytes" && echo "raised $d"; done
      umount /tmp/bf-raise-$$; exec python3 -c 'a = bytearray(256 * 1024 * 1024); print("held 256 MB")'`;
    const command = joinCommand(cgroup, {
      command: 'unshare',
      args: ['--user', '--map-root-user', '--mount', '--cgroup', 'sh', '-c', raise],
    });
    const child = spawn(command.command, command.args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    child.stdout.on('data', (chunk) => {
      said += String(chunk);
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.once('exit', (...end) => resolve(end)));
    expect(said).not.toContain('held 256 MB');
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
    expect(cgroup.outOfMemory()).toBe(true);
    await cgroup.remove();
    cgroups.close();
  });
});

describe('ending a browser’s processes', () => {
  /** A process outside any browser's group, whose pid a group's `cgroup.procs` names (as a reused pid would be). */
  const bystander = () => {
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    const group = mkdtempSync(path.join(os.tmpdir(), 'browserflow-0123456789ab-'));
    writeFileSync(path.join(group, 'cgroup.procs'), `${child.pid}\n`);
    const alive = () => child.exitCode === null && child.signalCode === null;
    return { child, group, alive };
  };

  it('cgroup v1: a pid that is no longer in the group is not killed', async () => {
    const { child, group, alive } = bystander();
    new BrowserCgroup([group], []).kill();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(alive()).toBe(true);
    child.kill('SIGKILL');
  });

  it('cgroup v2: the kernel kills the group (cgroup.kill), with no pid in between', async () => {
    const { child, group, alive } = bystander();
    writeFileSync(path.join(group, 'cgroup.kill'), '');
    new BrowserCgroup([group], []).kill();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(readFileSync(path.join(group, 'cgroup.kill'), 'utf8')).toBe('1');
    expect(alive()).toBe(true);
    child.kill('SIGKILL');
  });
});

describe('the bounds’ settings', () => {
  it('default to 2048 MB of memory, 1024 MB of disk, 1024 processes and threads, CPU weight 100', () => {
    expect(parseConfig({}).browsers.limits).toEqual({ memoryBytes: 2048 * 2 ** 20, diskBytes: 1024 * 2 ** 20, pids: 1024, cpuWeight: 100 });
  });

  it('refuse a disk as large as the memory: the disk is memory, counted in the memory limit', () => {
    expect(() => parseConfig({ BROWSER_MEMORY_LIMIT_MB: '768' })).toThrow(
      /BROWSER_DISK_LIMIT_MB: 1024 must be below BROWSER_MEMORY_LIMIT_MB \(768\)/,
    );
    expect(parseConfig({ BROWSER_MEMORY_LIMIT_MB: '768', BROWSER_DISK_LIMIT_MB: '256' }).browsers.limits.memoryBytes).toBe(768 * 2 ** 20);
    expect(() => parseConfig({ BROWSER_CPU_WEIGHT: '0' })).toThrow(ConfigError);
  });
});
