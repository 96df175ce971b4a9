import { describe, expect, it, vi } from 'vitest';
import {
  CompileSandbox,
  compileHere,
  type SandboxMessage,
  type SandboxRequest,
  type SandboxWorker,
} from './compile-sandbox';

/**
 * A stand-in for the sandbox worker: compiles with `compileHere`, except sources containing `HANG`, which it
 * never answers (like a worker stuck in an endless loop). `start: 'fail'` makes it fail to start.
 */
class FakeSandboxWorker implements SandboxWorker {
  static spawned: FakeSandboxWorker[] = [];
  terminated = false;
  readonly #message = new Set<(event: MessageEvent<unknown>) => void>();
  readonly #error = new Set<(event: Event) => void>();

  constructor(start: 'ok' | 'fail' = 'ok') {
    FakeSandboxWorker.spawned.push(this);
    setTimeout(() => {
      if (start === 'fail') for (const listener of this.#error) listener({ message: 'boom' } as ErrorEvent);
      else this.#post({ type: 'ready' });
    }, 1);
  }

  postMessage({ id, source, fileName }: SandboxRequest): void {
    if (source.includes('HANG')) return;
    void compileHere(source, fileName).then((report) => this.#post({ type: 'report', id, report }));
  }

  addEventListener(type: 'message' | 'error', listener: (event: never) => void): void {
    if (type === 'message') this.#message.add(listener as (event: MessageEvent<unknown>) => void);
    else this.#error.add(listener as (event: Event) => void);
  }

  terminate(): void {
    this.terminated = true;
  }

  #post(data: SandboxMessage): void {
    if (!this.terminated) for (const listener of this.#message) listener({ data } as MessageEvent<unknown>);
  }
}

const good = `import { defineWorkflow } from 'shuttle';\nexport default defineWorkflow({ name: 'ok', version: 2, *run() {} });\n`;

describe('CompileSandbox', () => {
  it('reports what the sandbox worker found, as plain data', async () => {
    FakeSandboxWorker.spawned = [];
    const sandbox = new CompileSandbox({ spawn: () => new FakeSandboxWorker() });
    await expect(sandbox.check(good, 'ok.ts')).resolves.toEqual({ ok: true, name: 'ok', version: 2 });
    await expect(sandbox.check('export default 1 +;', 'bad.ts')).resolves.toMatchObject({
      ok: false,
      diagnostics: [{ kind: 'syntax', line: 1 }],
    });
    expect(FakeSandboxWorker.spawned).toHaveLength(1);
  });

  it('gives up on a source that does not finish loading, replaces the worker, and carries on', async () => {
    FakeSandboxWorker.spawned = [];
    const sandbox = new CompileSandbox({ spawn: () => new FakeSandboxWorker(), timeoutMs: 50 });
    const [hung, next] = await Promise.all([
      sandbox.check('/* HANG */ while (true) {}', 'loop.ts'),
      sandbox.check(good, 'ok.ts'),
    ]);
    expect(hung).toMatchObject({
      ok: false,
      diagnostics: [
        {
          kind: 'evaluation',
          line: 1,
          message: expect.stringMatching(/did not finish loading within 0.05 s/),
        },
      ],
    });
    expect(next).toEqual({ ok: true, name: 'ok', version: 2 });
    expect(FakeSandboxWorker.spawned.map((worker) => worker.terminated)).toEqual([true, false]);
  });

  it('compiles in this worker when the sandbox cannot start', async () => {
    FakeSandboxWorker.spawned = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const sandbox = new CompileSandbox({ spawn: () => new FakeSandboxWorker('fail') });
    await expect(sandbox.check(good, 'ok.ts')).resolves.toEqual({ ok: true, name: 'ok', version: 2 });
    await expect(sandbox.check(good, 'ok.ts')).resolves.toMatchObject({ ok: true });
    expect(FakeSandboxWorker.spawned).toHaveLength(1);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });
});
