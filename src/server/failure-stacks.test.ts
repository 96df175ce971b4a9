/**
 * The server runtime records a failing activity's stack naming the definition file and line it threw at: a
 * studio-style file (compiled like the studio's definitions, mapped back through its source positions) and a
 * Node module file (loaded by Node, which names the file itself), run by `startWorker` as `shuttle worker`
 * runs them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import type { SerializedError } from '../engine';
import { MemoryStorage } from '../storage/memory';
import { createLogger } from './log';
import type { OpenedStore } from './store';
import { startWorker, type RunningWorker } from './worker';

const folder = mkdtempSync(join(tmpdir(), 'shuttle-stacks-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Line 8, column 40 of each file: `new Error(…)` in the activity (sucrase moves it: `as number` goes). */
const body = (name: string) => `
export const ${name.replace('-', '')} = defineWorkflow({
  name: '${name}',
  version: 1,
  *run(ctx) {
    yield* ctx.activity('charge', () => {
      const cents: number = 1250;
      if ((cents as number) > 0) throw new Error(\`card declined: \${cents}\`);
    }, { retry: { maxAttempts: 1 } });
  },
});
`;

const studioStyle = join(folder, 'billing.ts');
writeFileSync(studioStyle, `import { defineWorkflow } from 'shuttle';${body('billing')}`);
const nodeModule = join(folder, 'billing-node.ts');
// An import other than 'shuttle' makes the file a Node module (src/server/definitions.ts).
writeFileSync(
  nodeModule,
  `import { defineWorkflow } from '${join(process.cwd(), 'src/public/workflow.ts')}';${body('billing-node')}`,
);

// A bundled file: the Node module above, bundled by esbuild into one .mjs with a source map beside it.
const bundled = join(folder, 'out', 'billing-bundled.mjs');
const bundledSource = join(folder, 'billing-bundled.ts');
writeFileSync(
  bundledSource,
  `import { defineWorkflow } from '${join(process.cwd(), 'src/public/workflow.ts')}';${body('billing-bundled')}`,
);
buildSync({
  entryPoints: [bundledSource],
  bundle: true,
  platform: 'node',
  format: 'esm',
  sourcemap: true,
  outfile: bundled,
  logLevel: 'silent',
});

const memoryStore = (): OpenedStore => ({
  storage: new MemoryStorage(),
  liveness: null,
  label: 'memory',
  kind: 'embedded',
  close: async () => undefined,
});

async function failedStack(worker: RunningWorker, type: string): Promise<string> {
  const handle = await worker.engine.start(type, undefined, { id: type });
  await handle.result().catch(() => undefined);
  const failed = (await worker.engine.timeline(type)).find((entry) => entry.kind === 'activity-failed');
  return (failed!.detail as { error: SerializedError }).error.stack!;
}

describe('a server worker records where an activity threw', () => {
  it('names the definition file and line, and marks the engine frames', async () => {
    const worker = await startWorker({
      workflows: [studioStyle, nodeModule],
      store: memoryStore(),
      logger: createLogger({}, () => undefined),
    });
    try {
      const studio = await failedStack(worker, 'billing');
      const first = studio.split('\n')[1]!;
      expect(first).toMatch(/\(billing\.ts:8:40\)$/);
      expect(studio).toMatch(/src\/engine\/run\/activity-attempt\.ts:\d+:\d+\) \[engine\]/);

      const node = await failedStack(worker, 'billing-node');
      expect(node.split('\n')[1]).toMatch(/billing-node\.ts:8:40\)$/);
    } finally {
      await worker.stop();
    }
  });
});

describe('a bundled definition file', () => {
  it("is mapped through the bundler's source map to the author's file and line (a real worker process)", async () => {
    // Vitest loads modules through its own runner, which applies no Node source maps: the worker runs in a
    // Node process of its own, as `shuttle worker` does, and prints the recorded stack.
    const script = join(folder, 'run-bundled.mts');
    writeFileSync(
      script,
      `import { startWorker } from '${join(process.cwd(), 'src/server/worker.ts')}';
import { MemoryStorage } from '${join(process.cwd(), 'src/storage/memory.ts')}';
import { createLogger } from '${join(process.cwd(), 'src/server/log.ts')}';
const worker = await startWorker({
  workflows: [${JSON.stringify(bundled)}],
  store: { storage: new MemoryStorage(), liveness: null, label: 'memory', kind: 'embedded', close: async () => undefined },
  logger: createLogger({}, () => undefined),
});
const handle = await worker.engine.start('billing-bundled', undefined, { id: 'b' });
await handle.result().catch(() => undefined);
const failed = (await worker.engine.timeline('b')).find((entry) => entry.kind === 'activity-failed');
process.stdout.write(failed.detail.error.stack);
await worker.stop();
process.exit(0);
`,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(0);
    const stack = child.stdout;
    expect(stack.split('\n')[0]).toBe('Error: card declined: 1250');
    expect(stack.split('\n')[1]).toMatch(/billing-bundled\.ts:8:40\)$/);
    expect(stack).not.toContain('billing-bundled.mjs');
  }, 90_000);
});
