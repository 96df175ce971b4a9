/**
 * `shuttle dev`: a fleet on your laptop. It starts PostgreSQL (a throwaway server in a temporary folder, as
 * the tests use, unless a database URL is given), N `shuttle worker` processes on it, and the studio
 * (`shuttle serve`) in this process, controlling those workers: the studio can kill (SIGKILL), freeze
 * (SIGSTOP, then SIGCONT), thaw, stop (SIGTERM) any of them, and start one more.
 *
 * Guarantees:
 * - `stop()` (Ctrl-C) stops everything it started: the studio, every worker (SIGTERM, then SIGKILL after
 *   5 s), and the PostgreSQL server it started (its folder removed). If this process dies, its workers are
 *   killed on exit too: nothing it started is left running.
 * - Workers are real processes of `bin/shuttle.mjs worker`, with their own engines, sessions and liveness
 *   locks: what the studio shows of a handoff is what happens between processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { FleetActionOutcome, FleetActionType, FleetProcess } from '../protocol';
import type { FleetControl } from '../host/engine-host';
import { startLocalPostgres, type LocalPostgres } from './local-postgres';
import { startServer, type RunningServer } from './serve';
import { describeDatabaseUrl, StartupError } from './store';
import { shuttleBin } from './package-root';

export type FleetOptions = {
  /** Use this PostgreSQL database; default: start a throwaway server. */
  databaseUrl?: string;
  /** Worker processes to start. Default 3. */
  workers?: number;
  /** Studio port; 0 picks a free one. Default 7300. */
  port?: number;
  workflows?: readonly string[];
  demos?: boolean;
  /** Where progress lines go (one line each). Default: nowhere. */
  output?: (line: string) => void;
  /** Extra flags for every worker (e.g. `['--claim-ttl-ms', '3000']`). */
  workerArgs?: readonly string[];
};

export type RunningFleet = {
  readonly url: string;
  readonly databaseUrl: string;
  readonly storeLabel: string;
  readonly server: RunningServer;
  /** The worker processes, as the studio sees them. */
  readonly workers: FleetProcess[];
  /** Starts one more worker; resolves once its engine runs. */
  startWorker(): Promise<FleetProcess>;
  stop(): Promise<void>;
};

type Worker = FleetProcess & {
  child: ChildProcess;
  thaw?: ReturnType<typeof setTimeout>;
  exited: Promise<void>;
};

export async function startFleet(options: FleetOptions): Promise<RunningFleet> {
  const say = options.output ?? (() => undefined);
  let postgres: LocalPostgres | null = null;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl) {
    say('starting PostgreSQL (a throwaway server in a temporary folder)…');
    try {
      postgres = await startLocalPostgres({ durable: true });
    } catch (error) {
      throw new StartupError(
        `Could not start a local PostgreSQL: ${error instanceof Error ? error.message : String(error)}. Install PostgreSQL (Debian: apt-get install postgresql), or give a database with --database-url postgres://…`,
      );
    }
    databaseUrl = postgres.url;
  }
  const workers: Worker[] = [];
  let counter = 0;
  let stopping = false;

  const spawnWorker = (): Promise<Worker> => {
    counter++;
    const label = `worker-${counter}`;
    const args = [shuttleBin, 'worker', '--database-url', databaseUrl!, '--label', label];
    for (const path of options.workflows ?? []) args.push('--workflows', path);
    if (options.demos) args.push('--demos');
    args.push(...(options.workerArgs ?? []));
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let resolveExit!: () => void;
    const worker: Worker = {
      engineId: null,
      label,
      pid: child.pid ?? -1,
      state: 'starting',
      startedAt: Date.now(),
      child,
      exited: new Promise((resolve) => (resolveExit = resolve)),
    };
    workers.push(worker);
    return new Promise((resolve, reject) => {
      let buffer = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          const entry = parseLogLine(line);
          if (!entry) continue;
          if (entry.msg === 'worker started') {
            worker.engineId = String(entry.engineId);
            worker.state = 'running';
            resolve(worker);
          }
          const msg = String(entry.msg);
          if (['worker started', 'worker stopped', 'claim taken over', 'write fenced out'].includes(msg))
            say(`[${label}] ${msg}${entry.workflowId ? ` ${String(entry.workflowId)}` : ''}`);
        }
      });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('exit', (code, signal) => {
        worker.state = 'exited';
        worker.exit = signal ?? `exit code ${code}`;
        if (worker.thaw) clearTimeout(worker.thaw);
        resolveExit();
        if (!stopping) say(`[${label}] exited (${worker.exit})`);
        reject(
          new StartupError(
            `${label} exited before it started (${worker.exit}): ${stderr.trim() || 'no output'}`,
          ),
        );
      });
    });
  };

  const killAll = () => {
    for (const worker of workers) if (worker.state !== 'exited') worker.child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const control: FleetControl = {
    list: () =>
      workers.map(({ child: _child, thaw: _thaw, exited: _exited, ...process }) => ({ ...process })),
    act: async (engineId, action, seconds) => {
      if (action === 'start') {
        const started = await spawnWorker();
        return outcome(action, started);
      }
      const worker = workers.find(
        (candidate) => candidate.engineId === engineId && candidate.state !== 'exited',
      );
      if (!worker)
        throw Object.assign(new Error(`No running worker process of this fleet runs engine ${engineId}.`), {
          name: 'ControlTargetNotFoundError',
        });
      signal(worker, action, seconds);
      return outcome(action, worker);
    },
  };

  let server: RunningServer;
  try {
    say(`starting ${options.workers ?? 3} workers…`);
    await Promise.all(Array.from({ length: options.workers ?? 3 }, () => spawnWorker()));
    server = await startServer({
      databaseUrl,
      port: options.port ?? 7300,
      workflows: options.workflows ?? [],
      demos: options.demos ?? false,
      fleet: control,
    });
  } catch (error) {
    stopping = true;
    killAll();
    await postgres?.stop().catch(() => undefined);
    throw error;
  }
  return {
    url: server.url,
    databaseUrl,
    storeLabel: describeDatabaseUrl(databaseUrl),
    server,
    get workers() {
      return control.list();
    },
    startWorker: async () => outcome('start', await spawnWorker()) && control.list().at(-1)!,
    stop: async () => {
      stopping = true;
      await server.stop().catch(() => undefined);
      for (const worker of workers)
        if (worker.state !== 'exited') {
          worker.child.kill('SIGCONT');
          worker.child.kill('SIGTERM');
        }
      await Promise.race([
        Promise.all(workers.map((worker) => worker.exited)),
        new Promise((resolve) => setTimeout(resolve, 5_000)),
      ]);
      killAll();
      await Promise.all(workers.map((worker) => worker.exited));
      process.removeListener('exit', killAll);
      await postgres?.stop().catch(() => undefined);
    },
  };
}

function signal(worker: Worker, action: Exclude<FleetActionType, 'start'>, seconds?: number): void {
  switch (action) {
    case 'kill':
      worker.child.kill('SIGKILL');
      return;
    case 'stop':
      worker.state = 'stopping';
      worker.child.kill('SIGCONT');
      worker.child.kill('SIGTERM');
      return;
    case 'freeze':
      worker.child.kill('SIGSTOP');
      worker.state = 'frozen';
      if (worker.thaw) clearTimeout(worker.thaw);
      worker.thaw = setTimeout(() => signal(worker, 'thaw'), (seconds ?? 10) * 1000);
      return;
    case 'thaw':
      if (worker.thaw) clearTimeout(worker.thaw);
      worker.thaw = undefined;
      if (worker.state === 'exited') return;
      worker.child.kill('SIGCONT');
      worker.state = 'running';
      return;
  }
}

function outcome(action: FleetActionType, worker: FleetProcess): FleetActionOutcome {
  return { action, pid: worker.pid, engineId: worker.engineId, label: worker.label };
}

function parseLogLine(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
