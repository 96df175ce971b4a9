import { describe, expect, it } from 'vitest';
import { TestWorld } from '../../engine/engine.test-support';
import type { SerializedError } from '../../engine';
import { compileDefinition } from './compile';
import { saveDefinition } from './definition-store';
import { engineFrameMark, mapDefinitionStack } from './stack-map';

/** A definition whose activity throws at line 9, column 58 (`new Error`), and whose body throws at line 12. */
const source = (name: string, pad = '') =>
  [
    "import { defineWorkflow } from 'shuttle';",
    '',
    `export default defineWorkflow({`,
    `  name: '${name}',`,
    '  version: 1,',
    '  *run(ctx, input: { fail: "activity" | "body" }) {',
    '    if (input.fail === "activity")',
    '      yield* ctx.activity("charge", () => {',
    `        const amount: number = 12;${pad} if (amount > 0) throw new Error("card declined");`,
    '      }, { retry: { maxAttempts: 1 } });',
    '    yield* ctx.sleep(10);',
    '    const reason: string = "no address"; throw new TypeError(reason);',
    '  },',
    '});',
    '',
  ].join('\n');

const frames = (stack: string) => stack.split('\n').filter((line) => /^\s*at\s/.test(line));

async function failureOf(name: string, fail: 'activity' | 'body', pad = '') {
  const compiled = await compileDefinition(source(name, pad), `${name}.ts`);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const world = new TestWorld();
  const engine = await world.engine([compiled.definition], { mapStack: mapDefinitionStack });
  await engine.start(name, { fail }, { id: 'w' });
  await world.advance(20, { stepMs: 10 });
  const record = await engine.describe('w');
  expect(record.status).toBe('failed');
  return { record, timeline: await engine.timeline('w') };
}

describe('mapDefinitionStack', () => {
  it("names an activity's throw by the authored file, line and column, and marks the engine's frames", async () => {
    const { timeline, record } = await failureOf('shop', 'activity');
    const failed = timeline.find((entry) => entry.kind === 'activity-failed');
    const stack = (failed!.detail as { error: SerializedError }).error.stack!;
    const first = frames(stack)[0]!;
    // Column 58 of the source; sucrase moved it (it removed `: number`), the mapping moves it back.
    expect(first).toMatch(/\(shop\.ts:9:58\)$/);
    expect(stack).not.toMatch(/definitions\/\d+\//);
    // Every frame is the author's or marked as the engine's (here: the engine's sources, Node's internals).
    const engineFrames = frames(stack).filter((line) => line.endsWith(engineFrameMark));
    expect(engineFrames.length).toBeGreaterThan(0);
    expect(engineFrames.some((line) => /src\/engine\//.test(line))).toBe(true);
    for (const line of frames(stack))
      expect(line.endsWith(engineFrameMark) || /shop\.ts:\d+:\d+\)?$/.test(line)).toBe(true);
    // The workflow's error carries the activity's mapped stack as its cause.
    expect((record.error?.details?.failure as SerializedError).stack).toContain('(shop.ts:9:58)');
  });

  it("names a workflow body's throw by the authored file and line", async () => {
    const { record } = await failureOf('ship', 'body');
    expect(record.error?.name).toBe('TypeError');
    expect(frames(record.error!.stack!)[0]).toMatch(/ship\.ts:12:48\)$/);
  });

  it('maps each compilation through its own positions (two versions of one file name)', async () => {
    const a = await failureOf('twice', 'activity');
    const b = await failureOf('twice', 'activity', '          ');
    const stackOf = (timeline: typeof a.timeline) =>
      (timeline.find((entry) => entry.kind === 'activity-failed')!.detail as { error: SerializedError }).error
        .stack!;
    expect(stackOf(a.timeline)).toContain('(twice.ts:9:58)');
    expect(stackOf(b.timeline)).toContain('(twice.ts:9:68)');
  });

  it('marks frames of the worker bundle, node internals and builtins; keeps other files and the message', () => {
    const stack = [
      'Error: at first sight',
      '    at charge (https://studio.example/assets/engine.worker-BxF3a9.js:1:40211)',
      '    at Generator.next (<anonymous>)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at async Promise.all (index 0)',
      '    at lookup (/srv/app/workflows/billing.ts:40:7)',
      '    at /srv/app/node_modules/pg/lib/client.js:526:17',
    ].join('\n');
    expect(mapDefinitionStack(stack).split('\n')).toEqual([
      'Error: at first sight',
      `    at charge (https://studio.example/assets/engine.worker-BxF3a9.js:1:40211)${engineFrameMark}`,
      `    at Generator.next (<anonymous>)${engineFrameMark}`,
      `    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)${engineFrameMark}`,
      `    at async Promise.all (index 0)${engineFrameMark}`,
      '    at lookup (/srv/app/workflows/billing.ts:40:7)',
      `    at /srv/app/node_modules/pg/lib/client.js:526:17${engineFrameMark}`,
    ]);
    // Mapping twice changes nothing.
    expect(mapDefinitionStack(mapDefinitionStack(stack))).toBe(mapDefinitionStack(stack));
    // A module no longer registered keeps its line (sucrase keeps lines) under its file name.
    expect(mapDefinitionStack('    at run (definitions/999999/gone.ts:7:3)')).toBe(
      '    at run (gone.ts:7:3)',
    );
  });
});

describe('saveDefinition', () => {
  it('registers the saved definition compiled under its own name, so its stacks name <name>.ts', async () => {
    const world = new TestWorld();
    const engine = await world.engine([], { mapStack: mapDefinitionStack });
    const saved = await saveDefinition(world.storage, engine, source('cart', ''), {
      savedBy: engine.id,
      reservedNames: new Set(),
      now: world.clock.now(),
    });
    expect(saved.outcome.ok).toBe(true);
    if (!saved.compiled.ok) throw new Error('did not compile');
    engine.register(saved.compiled.definition);
    await engine.start('cart', { fail: 'body' }, { id: 'c' });
    await world.advance(20, { stepMs: 10 });
    const stack = (await engine.describe('c')).error!.stack!;
    expect(frames(stack)[0]).toMatch(/\(cart\.ts:12:48\)$/);
    expect(stack).not.toContain('definition.ts');
  });
});
