/**
 * Checking a definition's source in a throwaway worker before the engine's worker evaluates it.
 *
 * Compiling evaluates the module's top level. Code that never finishes there (`while (true) {}` typed in the
 * editor, a loop whose condition has a typo) would stall the engine's worker for good — its workflows, its
 * claims, its answers to the page. So the studio's compile-as-you-type and every save first compile the
 * source in a separate worker, which is terminated (and replaced) when it does not answer within
 * `timeoutMs`; only a source that loaded there is saved, and so evaluated by the engines of every tab.
 *
 * Guarantees:
 * - `check` never throws and settles within about `timeoutMs` once the sandbox has started; requests run one
 *   at a time, so a timeout is always charged to the source that caused it.
 * - The report is plain data: the name and version the source declares, or its diagnostics (with line and
 *   column). A source that did not finish loading is reported at line 1 with what to look for.
 * - A sandbox that cannot start (no worker support, a failing script) is not retried for every check: checks
 *   then compile in this worker, as without a sandbox.
 */
import type { CompileReport } from '../../protocol/definitions';
import { compileDefinition } from './compile';

/** What checking a source found: the definition it declares, or what is wrong with it. */
export type { CompileReport };

/** Messages between the sandbox and its worker (src/worker/compile.worker.ts). */
export type SandboxRequest = { id: number; source: string; fileName: string };
export type SandboxMessage = { type: 'ready' } | { type: 'report'; id: number; report: CompileReport };

/** The parts of a `Worker` the sandbox uses. */
export type SandboxWorker = {
  postMessage(message: SandboxRequest): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<unknown>) => void): void;
  addEventListener(type: 'error', listener: (event: Event) => void): void;
  terminate(): void;
};

export type CompileSandboxOptions = {
  /** Starts a sandbox worker (src/worker/compile.worker.ts). */
  spawn: () => SandboxWorker;
  /** How long one source may take to load, in ms. Default 2,000. */
  timeoutMs?: number;
  /** How long a new sandbox may take to start (load the compiler), in ms. Default 20,000. */
  startTimeoutMs?: number;
};

type Running = {
  worker: SandboxWorker;
  ready: Promise<void>;
  reports: Map<number, (r: CompileReport) => void>;
};

/** Compiles `source` in this worker and reports the outcome as plain data. */
export async function compileHere(source: string, fileName: string): Promise<CompileReport> {
  const result = await compileDefinition(source, fileName);
  return result.ok
    ? { ok: true, name: result.definition.name, version: result.definition.version }
    : { ok: false, diagnostics: result.diagnostics };
}

export class CompileSandbox {
  readonly #spawn: () => SandboxWorker;
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  #running: Running | null = null;
  #unavailable = false;
  #nextId = 1;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: CompileSandboxOptions) {
    this.#spawn = options.spawn;
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#startTimeoutMs = options.startTimeoutMs ?? 20_000;
  }

  /** Compiles `source` in the sandbox; see the module header. */
  check(source: string, fileName: string): Promise<CompileReport> {
    const next = this.#queue.then(() => this.#checkNow(source, fileName));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Terminates the sandbox worker, if one runs. */
  dispose(): void {
    this.#running?.worker.terminate();
    this.#running = null;
  }

  async #checkNow(source: string, fileName: string): Promise<CompileReport> {
    if (this.#unavailable) return compileHere(source, fileName);
    let running: Running;
    try {
      running = this.#running ?? this.#start();
      await within(running.ready, this.#startTimeoutMs, 'the compile sandbox did not start');
    } catch (error) {
      console.warn('[shuttle worker] compiling without a sandbox:', error);
      this.dispose();
      this.#unavailable = true;
      return compileHere(source, fileName);
    }
    const id = this.#nextId++;
    const report = new Promise<CompileReport>((resolve) => running.reports.set(id, resolve));
    running.worker.postMessage({ id, source, fileName });
    try {
      return await within(report, this.#timeoutMs, 'timeout');
    } catch {
      this.dispose(); // it may be stuck for good: start afresh next time
      const seconds = this.#timeoutMs / 1_000;
      return {
        ok: false,
        diagnostics: [
          {
            kind: 'evaluation',
            message: `The module did not finish loading within ${seconds} s. Is there an endless loop at its top level (outside run and the activities)? Nothing was saved.`,
            line: 1,
            column: 1,
          },
        ],
      };
    }
  }

  #start(): Running {
    const worker = this.#spawn();
    const reports = new Map<number, (report: CompileReport) => void>();
    const ready = new Promise<void>((resolve, reject) => {
      worker.addEventListener('message', (event) => {
        const message = event.data as SandboxMessage;
        if (message?.type === 'ready') resolve();
        else if (message?.type === 'report') {
          reports.get(message.id)?.(message.report);
          reports.delete(message.id);
        }
      });
      worker.addEventListener('error', (event) => {
        const detail = (event as ErrorEvent).message;
        reject(new Error(`the compile sandbox failed to start${detail ? `: ${detail}` : ''}`));
      });
    });
    ready.catch(() => undefined);
    this.#running = { worker, ready, reports };
    return this.#running;
  }
}

function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
