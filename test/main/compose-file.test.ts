import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError, parseConfig } from '../../server/config.ts';

/**
 * temporal-compose.yml as `docker compose` reads it (no engine runs containers here; scripts/test.sh
 * also runs `docker compose config -q`): the production processes, any number of browser hosts in
 * their own network namespaces reached over their relays, and settings every process accepts.
 */

const root = path.join(import.meta.dirname, '..', '..');
type Service = {
  command?: string[];
  environment?: Record<string, string>;
  ports?: unknown[];
  expose?: unknown[];
  network_mode?: string;
  container_name?: string;
  hostname?: string;
  depends_on?: Record<string, { condition: string }>;
};
const file = parse(readFileSync(path.join(root, 'temporal-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = file.services;
const appServices = ['migrate', 'api', 'worker', 'browser-host'];

/** What an operator sets before `up` (the file's header); the rest takes the file's defaults. */
const operatorEnv: Record<string, string> = {
  JWT_SECRET: 'a'.repeat(64),
  SMTP_URL: 'smtp://user:pass@mail.example:587',
};

/** Compose's interpolation of `${NAME}`, `${NAME:-default}` and `$$`, from `env`. */
function interpolate(value: string, env: Record<string, string>) {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (match, name?: string, fallback?: string) =>
    match === '$$' ? '$' : env[name as string] || (fallback ?? ''),
  );
}

/** A container's hostname as Docker sets it (its id's first 12 hex digits): each replica has its own. */
const containerHostname = '3f2a9c1b7d4e';

/** A service's environment as its process sees it, with the variables its command sets (its shell expanding HOSTNAME). */
function processEnv(name: string, env = operatorEnv) {
  const service = services[name] as Service;
  const out = Object.fromEntries(Object.entries(service.environment ?? {}).map(([key, value]) => [key, interpolate(String(value), env)]));
  const shell = service.command?.[0] === 'sh' ? interpolate(service.command[2] ?? '', env) : '';
  for (const [, key, value] of shell.matchAll(/([A-Z_]+)="?([^"\s]+)"?\s/g)) {
    out[key as string] = (value as string).replace(/\$\{?HOSTNAME\}?/, containerHostname);
  }
  return out;
}

describe('temporal-compose.yml', () => {
  it('runs the database, Temporal, the migration, the api, the worker and the browser hosts', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgresql', 'temporal', ...appServices]));
    for (const name of ['api', 'worker', 'browser-host']) {
      expect(services[name]?.depends_on?.migrate?.condition, name).toBe('service_completed_successfully');
      expect(services[name]?.depends_on?.temporal?.condition, name).toBe('service_healthy');
    }
  });

  it('scales the browser hosts: each in its own network namespace, with its own id, publishing nothing', () => {
    const host = services['browser-host'] as Service;
    // `--scale browser-host=N` needs a service that names no container, hostname or host port.
    expect(host.network_mode).toBeUndefined();
    expect(host.container_name).toBeUndefined();
    expect(host.hostname).toBeUndefined();
    expect(host.ports).toBeUndefined();
    // Each replica's id is its container's hostname, which Docker sets per container.
    expect(host.command?.join(' ')).toContain('BROWSER_HOST_ID="$${HOSTNAME}" exec node server/main/browserHost.ts');
    expect(processEnv('browser-host').BROWSER_HOST_ID).toBe(containerHostname);
    expect(host.environment?.BROWSER_HOST_ADDRESS).toBe('auto');
    expect(host.environment?.BROWSER_RELAY_PORT).toBe('9230');
  });

  it('runs the hosts with the browser sandbox: its tools in the image, user namespaces allowed, no privilege added', () => {
    const host = services['browser-host'] as Service & { security_opt?: string[]; privileged?: boolean; cap_add?: string[] };
    expect(processEnv('browser-host').BROWSER_SANDBOX).toBe('on');
    expect(parseConfig(processEnv('browser-host')).browsers.sandboxUser).not.toBeNull();
    expect(host.security_opt).toEqual(expect.arrayContaining(['seccomp=unconfined', 'apparmor=unconfined']));
    expect(host.privileged).toBeUndefined();
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const hostStage = dockerfile.slice(dockerfile.indexOf('AS browser-host'));
    expect(hostStage).toMatch(/apt-get install[^\n]*chromium[^\n]*bubblewrap[^\n]*socat/);
    // Not root: bubblewrap gives each browser a user namespace of the host's unprivileged user.
    expect(hostStage).toMatch(/USER node\n/);
  });

  it('bounds every browser: the host gets its container’s own cgroup, and runs as node with no capability', () => {
    const host = services['browser-host'] as Service & { user?: string; cap_add?: string[]; entrypoint?: string[] };
    // CAP_SYS_ADMIN only for the entrypoint's remount of that cgroup; no other capability.
    expect(host.cap_add).toEqual(['SYS_ADMIN']);
    expect(host.user).toBe('root');
    expect(host.entrypoint).toEqual(['sh', 'scripts/browser-host-entrypoint.sh']);
    const entrypoint = readFileSync(path.join(root, 'scripts/browser-host-entrypoint.sh'), 'utf8');
    // Its own cgroup namespace first: the cgroup it makes writable is the container's, never the machine's.
    expect(entrypoint.indexOf('own-cgroup-namespace.sh')).toBeGreaterThan(-1);
    expect(entrypoint.indexOf('own-cgroup-namespace.sh')).toBeLessThan(entrypoint.indexOf('mount -o remount'));
    // The host it starts is `node`, with no capability left to regain.
    expect(entrypoint.trim().split('\n').at(-1)).toBe(
      'exec setpriv --reuid=node --regid=node --init-groups --inh-caps=-all --bounding-set=-all -- "$@"',
    );
    // cgroup v2: the host in a leaf of the container's cgroup, which hands memory, pids and cpu down.
    expect(entrypoint).toContain('browserflow-host');
    expect(entrypoint).toContain('echo \'+memory +pids +cpu\' >"$cg/cgroup.subtree_control"');
    const limits = parseConfig(processEnv('browser-host')).browsers.limits;
    expect(limits).toEqual({ memoryBytes: 2048 * 2 ** 20, diskBytes: 1024 * 2 ** 20, pids: 1024, cpuWeight: 100 });
  });

  it('the browser host’s entrypoint refuses the machine’s cgroup namespace and takes its own', () => {
    const check = (lines: string) => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'cgroup-')), 'cgroup');
      writeFileSync(file, lines);
      return spawnSync('sh', [path.join(root, 'scripts/own-cgroup-namespace.sh'), file], { encoding: 'utf8' });
    };
    expect(check('0::/\n').status).toBe(0);
    expect(check('12:memory:/\n11:pids:/\n4:cpu,cpuacct:/\n1:name=systemd:/\n0::/\n').status).toBe(0);
    const shared = check('0::/system.slice/docker-4f2a.scope\n');
    expect(shared.status).toBe(1);
    expect(shared.stderr).toContain('cgroup: private');
    expect(check('12:memory:/docker/4f2a\n11:pids:/\n0::/\n').status).toBe(1);
  });

  it('puts the Temporal UI behind an OpenID Connect sign-in, published on the machine’s loopback only', () => {
    const ui = services['temporal-ui'] as Service & { environment?: Record<string, string> };
    expect(ui.ports).toEqual(['127.0.0.1:8233:8080']);
    expect(ui.environment).toMatchObject({ TEMPORAL_AUTH_ENABLED: 'true', TEMPORAL_AUTH_TYPE: 'oidc' });
    // The provider and client come from the operator; compose refuses to start without them.
    for (const name of ['TEMPORAL_AUTH_PROVIDER_URL', 'TEMPORAL_AUTH_CLIENT_ID', 'TEMPORAL_AUTH_CLIENT_SECRET'])
      expect(ui.environment?.[name], name).toMatch(/^\$\{TEMPORAL_UI_OIDC_[A-Z_]+:\?/);
    expect(ui.environment).not.toHaveProperty('TEMPORAL_CORS_ORIGINS');
  });

  it('publishes only the api and the operator’s Temporal ports: no DevTools or relay port of a host', () => {
    const published = Object.entries(services).flatMap(([name, service]) =>
      (service.ports ?? []).map((port) => ({ name, port: String(port) })),
    );
    expect(published.filter(({ name }) => name === 'browser-host')).toEqual([]);
    for (const { port } of published) expect(port).not.toMatch(/9230|9222/);
    expect(published).toContainEqual({ name: 'api', port: '3000:3000' });
  });

  it('gives every process the settings the configuration requires in production', () => {
    for (const name of appServices) {
      const env = processEnv(name);
      expect(env.NODE_ENV, name).toBe('production');
      expect(() => parseConfig(env), name).not.toThrow();
      // Without the operator's secret every process stops at start-up, naming it.
      expect(() => parseConfig(processEnv(name, { SMTP_URL: operatorEnv.SMTP_URL as string })), name).toThrow(ConfigError);
      expect(() => parseConfig(processEnv(name, { SMTP_URL: operatorEnv.SMTP_URL as string })), name).toThrow(/JWT_SECRET/);
    }
  });

  it('gives the api, the worker and the hosts the same JWT and relay secrets', () => {
    const env = { ...operatorEnv, BROWSER_RELAY_SECRET: 'b'.repeat(64) };
    const api = processEnv('api', env);
    for (const name of ['worker', 'browser-host']) {
      const other = processEnv(name, env);
      expect(other.JWT_SECRET, name).toBe(api.JWT_SECRET);
      expect(other.BROWSER_RELAY_SECRET, name).toBe(api.BROWSER_RELAY_SECRET);
      expect(other.DATABASE_URL, name).toBe(api.DATABASE_URL);
      expect(other.TEMPORAL_ADDRESS, name).toBe(api.TEMPORAL_ADDRESS);
      expect(other.TEMPORAL_NAMESPACE, name).toBe(api.TEMPORAL_NAMESPACE);
    }
    expect(api.BROWSER_RELAY_SECRET).toBe('b'.repeat(64));
  });

  it('is the file the README’s scale-out command starts', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toContain('docker compose -f temporal-compose.yml up --build --scale browser-host=3');
  });
});
