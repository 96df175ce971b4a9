/**
 * The runner's side of the fixture processes (engine-process.ts, dbos-peer.ts, dbos-queue-peer.ts): spawns one with
 * `node --import tsx`, sends it JSON-line commands on stdin and waits for the JSON lines it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type Message = { event: string; at: number } & Record<string, unknown>;

const fixtures = {
  engine: fileURLToPath(new URL('./engine-process.ts', import.meta.url)),
  dbos: fileURLToPath(new URL('./dbos-peer.ts', import.meta.url)),
  'dbos-queue': fileURLToPath(new URL('./dbos-queue-peer.ts', import.meta.url)),
} as const;
const root = fileURLToPath(new URL('../..', import.meta.url));

export class FixtureProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** `Date.now()` just before the process was spawned. */
  readonly spawnedAt: number;
  readonly messages: Message[] = [];
  readonly #waiters = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  private constructor(name: string, fixture: keyof typeof fixtures, args: readonly string[]) {
    this.name = name;
    this.spawnedAt = Date.now();
    this.child = spawn(
      process.execPath,
      ['--no-deprecation', '--import', 'tsx', fixtures[fixture], ...args],
      {
        cwd: root,
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    let buffered = '';
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        try {
          this.messages.push(JSON.parse(line) as Message);
        } catch {
          continue;
        }
        for (const wake of this.#waiters) wake();
      }
    });
    this.child.stdin!.on('error', () => undefined); // writing to a killed process
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.#exit = { code, signal };
        for (const wake of this.#waiters) wake();
        resolve({ code, signal });
      }),
    );
  }

  /** An engine process (engine-process.ts) on `schema`; resolves once its engine is ready. */
  static async engine(
    name: string,
    url: string,
    schema: string,
    options: { serveCheck?: boolean; timeoutMs?: number } = {},
  ): Promise<FixtureProcess> {
    const child = new FixtureProcess(name, 'engine', [
      url,
      schema,
      ...(options.serveCheck ? ['--serve-check'] : []),
    ]);
    await child.next('ready', options.timeoutMs ?? 60_000);
    return child;
  }

  /** The DBOS peer (dbos-peer.ts) on its own database; resolves once DBOS launched. */
  /** DBOS Transact on `url`, with its system-database pool of `poolSize` connections (default: DBOS's). */
  static async dbos(url: string, poolSize?: number, timeoutMs = 120_000): Promise<FixtureProcess> {
    const child = new FixtureProcess('dbos', 'dbos', poolSize ? [url, String(poolSize)] : [url]);
    await child.next('ready', timeoutMs);
    return child;
  }

  /**
   * DBOS Transact with a `WorkflowQueue` of concurrency 10 (dbos-queue-peer.ts) on `url`, polling it every
   * `pollIntervalMs` (default: DBOS's own, 1,000 ms); resolves once DBOS launched and the queue is registered.
   */
  static async dbosQueue(url: string, pollIntervalMs?: number, timeoutMs = 120_000): Promise<FixtureProcess> {
    const child = new FixtureProcess(
      `dbos-queue${pollIntervalMs ? `-${pollIntervalMs}ms` : ''}`,
      'dbos-queue',
      pollIntervalMs ? [url, String(pollIntervalMs)] : [url],
    );
    await child.next('ready', timeoutMs);
    return child;
  }

  get engineId(): string {
    return String(this.messages.find((message) => message.event === 'ready')?.engineId ?? '');
  }

  get alive(): boolean {
    return this.#exit === null;
  }

  send(command: Record<string, unknown>): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  /**
   * The first message of `event` at index `from` or later (or an `error` message, which rejects); waits up
   * to `timeoutMs` for it.
   */
  next(event: string, timeoutMs: number, from = 0): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.messages.slice(from).find((m) => m.event === event || m.event === 'error');
        if (found) {
          if (found.event === 'error') reject(new Error(`${this.name}: ${String(found.message)}`));
          else resolve(found);
          return true;
        }
        if (this.#exit) {
          reject(
            new Error(`${this.name} exited (${this.#exit.signal ?? this.#exit.code}) before '${event}'`),
          );
          return true;
        }
        return false;
      };
      if (check()) return;
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(new Error(`${this.name}: no '${event}' within ${timeoutMs} ms`));
      }, timeoutMs);
      const wake = () => {
        if (check()) {
          clearTimeout(timer);
          this.#waiters.delete(wake);
        }
      };
      this.#waiters.add(wake);
    });
  }

  /** Sends `command` and waits for the answer `event` printed after it. */
  async request(command: Record<string, unknown>, event: string, timeoutMs: number): Promise<Message> {
    const from = this.messages.length;
    this.send(command);
    return this.next(event, timeoutMs, from);
  }

  kill(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** Ends the process: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
