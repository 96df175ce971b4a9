/**
 * A throwaway PostgreSQL server on this machine, for tests and for local development (Node only).
 *
 * `startLocalPostgres()` runs `initdb` into a fresh folder, starts `postgres` on 127.0.0.1 on a free port
 * (its Unix socket inside the same folder), and resolves once it accepts connections. The server uses trust
 * authentication for the superuser `postgres`, UTF-8 and the C locale. `stop()` stops it and removes the
 * folder; the server is also stopped when this process exits (a watchdog stops it even if the process is
 * killed). `restart()` stops and starts the same server on the same data folder and port: data survives,
 * every connection is dropped — what the fault tests need. `listenAddresses` and `trustedNetworks` open it to
 * other addresses of this machine (the cluster fault suite's network namespaces reach it through veth pairs).
 *
 * PostgreSQL refuses to run as root: when this process is root, the binaries run as the `postgres` system
 * user (`runuser -u postgres`) and the folder is handed to that user; otherwise they run as the current user.
 * The binaries are taken from `SHUTTLE_POSTGRES_BIN` if set, else the newest `/usr/lib/postgresql/<n>/bin`
 * (Debian's layout; `apt-get install postgresql`), else `PATH`.
 *
 * @example
 * const server = await startLocalPostgres();
 * const storage = await PostgresStorage.open({ connectionString: server.url });
 * // …
 * await storage.close();
 * await server.stop();
 */

import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export type LocalPostgresOptions = {
  /**
   * Folder for the cluster (its data in `<dir>/data`, the socket and log beside it). Default: a fresh
   * folder under the system temp folder. A folder you give is kept by `stop()` (and reused by a later
   * start when it already holds a cluster), unless `removeOnStop` is true; a temp folder is always removed.
   * @example startLocalPostgres({ dir: '.shuttle/postgres' })
   */
  dir?: string;
  /** TCP port on 127.0.0.1. Default: a free port chosen by the operating system. @example 54329 */
  port?: number;
  /**
   * Whether commits are flushed to disk. Default false: `fsync` and `full_page_writes` are off, which is
   * much faster; a commit is still written to the operating system before it is acknowledged, so it
   * survives a crash of PostgreSQL (`restart({ mode: 'immediate' })`), and only a crash of the machine
   * loses data (fine for tests; pass true to measure real commit latency).
   */
  durable?: boolean;
  /** Remove `dir` on `stop()` even though you gave it. Default false. */
  removeOnStop?: boolean;
  /** Extra server settings, passed as `-c name=value`. @example { max_connections: '50' } */
  settings?: Record<string, string>;
  /**
   * Addresses the server listens on besides 127.0.0.1 (`listen_addresses`), e.g. the root side of veth pairs
   * leading into network namespaces. Each must be assigned to an interface of this machine whenever the
   * server starts (a link that is down keeps its address). Default none: 127.0.0.1 only.
   * @example ['10.222.7.1', '10.222.7.5']
   */
  listenAddresses?: readonly string[];
  /**
   * IPv4 networks (CIDR) whose clients connect with trust authentication, as `host all all <cidr> trust`
   * lines added to `pg_hba.conf` (127.0.0.1 and ::1 are always trusted). Default none.
   * @example ['10.222.7.0/24']
   */
  trustedNetworks?: readonly string[];
};

export type LocalPostgres = {
  /** Connection string for the superuser and the `postgres` database, e.g. `postgres://postgres@127.0.0.1:54329/postgres`. */
  readonly url: string;
  readonly port: number;
  /** The cluster's folder. */
  readonly dir: string;
  /** The server's log file (useful when a test fails). */
  readonly logFile: string;
  /**
   * Stops the server and starts it again on the same folder and port; resolves when it accepts
   * connections. Every open connection is dropped. `mode` is how it stops: `fast` (default) rolls back
   * open transactions and shuts down cleanly, `immediate` simulates a crash (recovery runs on start).
   */
  restart(options?: { mode?: 'fast' | 'immediate' }): Promise<void>;
  /**
   * Stops the server and removes the folder if it owns it (see `dir`); a kept folder is shut down cleanly.
   * Idempotent.
   */
  stop(): Promise<void>;
};

/** The folder holding `initdb`, `pg_ctl` and `postgres`. Throws an error saying how to install them. */
export function findPostgresBinaries(): string {
  const fromEnvironment = process.env.SHUTTLE_POSTGRES_BIN;
  if (fromEnvironment) {
    if (!existsSync(join(fromEnvironment, 'initdb')))
      throw new Error(
        `SHUTTLE_POSTGRES_BIN=${fromEnvironment} has no initdb; point it at PostgreSQL's bin folder.`,
      );
    return fromEnvironment;
  }
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((name) => /^\d+(\.\d+)?$/.test(name) && existsSync(join(debianRoot, name, 'bin', 'initdb')))
      .sort((left, right) => Number(right) - Number(left));
    if (versions[0] !== undefined) return join(debianRoot, versions[0], 'bin');
  }
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const initdb = onPath.stdout.trim();
  if (onPath.status === 0 && initdb) return initdb.slice(0, initdb.lastIndexOf('/'));
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl) were not found in /usr/lib/postgresql/*/bin or on PATH. ' +
      'Install them (Debian: apt-get install postgresql) or set SHUTTLE_POSTGRES_BIN to their folder.',
  );
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

function binaryCommand(binaries: string, name: string, args: readonly string[]): [string, string[]] {
  return isRoot
    ? ['runuser', ['-u', 'postgres', '--', join(binaries, name), ...args]]
    : [join(binaries, name), [...args]];
}

function describeFailure(name: string, args: readonly string[], output: string, logFile?: string): string {
  const log = logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
  return (
    `${name} ${args.join(' ')} failed: ${output.trim()}` + (log ? `\nServer log (last lines):\n${log}` : '')
  );
}

/** Runs a PostgreSQL binary as the right user; rejects with its output (and the server log) when it fails. */
function runBinary(
  binaries: string,
  name: string,
  args: readonly string[],
  logFile?: string,
): Promise<string> {
  const [command, fullArgs] = binaryCommand(binaries, name, args);
  return new Promise((resolve, reject) => {
    execFile(command, fullArgs, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(describeFailure(name, args, stderr || stdout, logFile), { cause: error }));
      else resolve(stdout);
    });
  });
}

/** The same, synchronously, for the exit handler (where nothing asynchronous runs any more). */
function runBinarySync(binaries: string, name: string, args: readonly string[]): void {
  const [command, fullArgs] = binaryCommand(binaries, name, args);
  spawnSync(command, fullArgs, { stdio: 'ignore' });
}

function postgresUserIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Hands `path` (recursively) to the `postgres` user when running as root. */
function handToPostgresUser(path: string): void {
  if (!isRoot) return;
  const { uid, gid } = postgresUserIds();
  chownSync(path, uid, gid);
  execFileSync('chown', ['-R', `${uid}:${gid}`, path]);
}

const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const ipv4Network = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** Adds a trust line to `hbaFile` for each network it does not list yet. */
function trustNetworks(hbaFile: string, networks: readonly string[]): void {
  if (networks.length === 0) return;
  const current = readFileSync(hbaFile, 'utf8');
  const lines = networks
    .map((network) => `host all all ${network} trust`)
    .filter((line) => !current.split('\n').some((existing) => existing.trim() === line));
  if (lines.length > 0)
    appendFileSync(hbaFile, `\n# added by startLocalPostgres (trustedNetworks)\n${lines.join('\n')}\n`);
}

/**
 * Starts a throwaway PostgreSQL server (see the module comment). Rejects with an error naming the failed
 * step and the server log's last lines when it cannot start.
 */
export async function startLocalPostgres(options: LocalPostgresOptions = {}): Promise<LocalPostgres> {
  for (const address of options.listenAddresses ?? [])
    if (!ipv4.test(address)) throw new Error(`listenAddresses: '${address}' is not an IPv4 address.`);
  for (const network of options.trustedNetworks ?? [])
    if (!ipv4Network.test(network))
      throw new Error(`trustedNetworks: '${network}' is not an IPv4 network like 10.0.0.0/24.`);
  const binaries = findPostgresBinaries();
  const ownsDir = options.dir === undefined || options.removeOnStop === true;
  const dir = resolve(options.dir ?? mkdtempSync(join(tmpdir(), 'shuttle-postgres-')));
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = options.port ?? (await findFreePort());
  const settings: Record<string, string> = {
    listen_addresses: ['127.0.0.1', ...(options.listenAddresses ?? [])].join(','),
    port: String(port),
    unix_socket_directories: dir,
    max_connections: '300',
    // synchronous_commit stays on: without fsync a commit only waits for write(), and an acknowledged commit
    // then survives a crash of PostgreSQL itself (what `restart({ mode: 'immediate' })` simulates).
    ...(options.durable ? {} : { fsync: 'off', full_page_writes: 'off' }),
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c '${name}=${value.replaceAll("'", "'\\''")}'`)
    .join(' ');

  const start = () =>
    runBinary(
      binaries,
      'pg_ctl',
      ['-D', dataDir, '-l', logFile, '-w', '-t', '60', '-o', serverOptions, 'start'],
      logFile,
    );
  const stopArgs = (mode: 'fast' | 'immediate') => ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop'];
  const isRunning = () => existsSync(join(dataDir, 'postmaster.pid'));
  const stopServer = async (mode: 'fast' | 'immediate') => {
    if (isRunning()) await runBinary(binaries, 'pg_ctl', stopArgs(mode), logFile);
  };
  const removeDir = () => {
    if (ownsDir) rmSync(dir, { recursive: true, force: true });
  };

  try {
    handToPostgresUser(dir);
    if (!existsSync(join(dataDir, 'PG_VERSION'))) {
      await runBinary(binaries, 'initdb', [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--auth=trust',
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
      ]);
    }
    trustNetworks(join(dataDir, 'pg_hba.conf'), options.trustedNetworks ?? []);
    await start();
  } catch (error) {
    await stopServer('immediate').catch(() => undefined);
    removeDir();
    throw error;
  }

  // If this process dies without running its exit handlers (SIGKILL, a crash), a detached watchdog stops
  // the server and removes the folder, so no orphan keeps running.
  const [stopCommand, stopCommandArgs] = binaryCommand(binaries, 'pg_ctl', stopArgs('immediate'));
  const quoted = [stopCommand, ...stopCommandArgs].map((part) => `'${part}'`).join(' ');
  const watchdog = spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${quoted} >/dev/null 2>&1;` +
        (ownsDir ? ` rm -rf '${dir}'` : ''),
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();

  let stopped = false;
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const forget = () => {
    stopped = true;
    process.off('exit', onExit);
    for (const signal of signals) process.off(signal, onSignal);
    if (watchdog.pid !== undefined) {
      try {
        process.kill(watchdog.pid);
      } catch {
        // The watchdog already ended.
      }
    }
  };
  /** On exit nothing asynchronous runs any more: stop synchronously. */
  const onExit = () => {
    if (stopped) return;
    forget();
    if (isRunning()) runBinarySync(binaries, 'pg_ctl', stopArgs('immediate'));
    removeDir();
  };
  /**
   * A signal with no other handler: stop now, then let the signal do what it would have. When the program
   * handles the signal itself (`shuttle dev` stops its workers and its studio first, which still need the
   * database), it stops the server in its own time; the exit handler and the watchdog remain the backstop.
   */
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return;
    onExit();
    process.kill(process.pid, signal);
  };
  process.on('exit', onExit);
  for (const signal of signals) process.on(signal, onSignal);

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    logFile,
    async restart({ mode = 'fast' } = {}) {
      if (stopped) throw new Error('this local PostgreSQL server was stopped; start a new one.');
      await stopServer(mode);
      await start();
    },
    async stop() {
      if (stopped) return;
      forget();
      // A folder we remove anyway needs no clean shutdown; a kept one does.
      await stopServer(ownsDir ? 'immediate' : 'fast').catch(() => undefined);
      removeDir();
    },
  };
}
