/**
 * Records the replay-test corpus of the demos: runs every demo of the start dialog on its sample input (and
 * the children they start) in an engine of its own, and saves each run's history (`engine.history`) as it
 * stands once every run has finished or waits on something from outside (a signal, an external completion):
 * finished histories and histories in flight. src/workflows/histories.test.ts replays them against the demos'
 * code, so a change to a demo that would break workflows already running is caught in CI.
 *
 *   npx tsx scripts/record-demo-histories.ts     (rewrites src/workflows/fixtures/histories/)
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, isTerminal } from '../src/engine';
import { MemoryStorage } from '../src/storage/memory';
import { builtInCatalog, builtInQueues, builtInWorkflows } from '../src/workflows';

const out = fileURLToPath(new URL('../src/workflows/fixtures/histories/', import.meta.url));
const engine = await createEngine({
  storage: new MemoryStorage(),
  workflows: [...builtInWorkflows],
  queues: builtInQueues,
});
for (const demo of builtInCatalog)
  await engine.start(demo.name, demo.sampleInput, { id: `demo-${demo.name}` });
// A second order, approved at once: it ships (the shipment child) and finishes; the first stays in flight.
const order = builtInCatalog.find((demo) => demo.name === 'order')!;
await engine.start('order', order.sampleInput, { id: 'demo-order-approved' });
await engine.signal('demo-order-approved', 'approve', { ok: true, by: 'recorder' });

/** Every run has ended, or waits on something only the outside can give (a signal, an update, an external completion). */
async function settled(): Promise<boolean> {
  const page = await engine.list({ limit: 1000 });
  for (const row of page.items) {
    if (isTerminal(row.status)) continue;
    const pending = (await engine.describe(row.workflowId)).pending;
    const outside = pending?.leaves.every(
      (leaf) => leaf.kind === 'signal' || leaf.kind === 'until' || leaf.completionToken,
    );
    if (!outside) return false;
  }
  return true;
}

const deadline = Date.now() + 60_000;
while (!(await settled())) {
  if (Date.now() > deadline) throw new Error('The demos did not settle within 60 s.');
  await new Promise((resolve) => setTimeout(resolve, 100));
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const page = await engine.list({ limit: 1000 });
for (const row of page.items) {
  const history = await engine.history(row.workflowId);
  const file = path.join(out, `${row.workflowId.replace(/[^A-Za-z0-9_.-]+/g, '_')}.json`);
  writeFileSync(file, `${JSON.stringify(history, null, 2)}\n`);
  console.log(
    `${path.relative(process.cwd(), file)}: ${row.workflowType}, ${row.status}, ${history.position} operations`,
  );
}
await engine.shutdown();
