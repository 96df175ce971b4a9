import { describe, expect, it, vi } from 'vitest';
import { builtInCatalog, builtInChildTypes, builtInQueues, builtInWorkflows } from './index';
import { TestWorld, runFor } from './workflows.test-support';

describe('built-in catalog', () => {
  it('offers every top-level demo once, with its definition’s description and sample input', () => {
    expect(builtInCatalog.map((demo) => demo.name)).toEqual([
      'order',
      'countdown',
      'fan-out',
      'saga',
      'flaky',
      'approval',
      'manual-approval',
      'slow-steps',
      'payment',
    ]);
    for (const demo of builtInCatalog) {
      const definition = builtInWorkflows.find((candidate) => candidate.name === demo.name)!;
      expect(definition, demo.name).toBeDefined();
      expect(demo).toMatchObject({
        version: definition.version,
        description: definition.description,
        sampleInput: definition.sampleInput,
      });
      expect(demo.title.length).toBeGreaterThan(0);
      expect(demo.description.length).toBeGreaterThan(20);
      // The studio edits the sample input as JSON.
      expect(JSON.parse(JSON.stringify(demo.sampleInput))).toEqual(demo.sampleInput);
    }
  });

  it('registers the child types but does not offer them as demos', () => {
    expect([...builtInChildTypes].sort()).toEqual(['fan-out-task', 'shipment']);
    expect(builtInCatalog.flatMap((demo) => demo.childTypes).sort()).toEqual(['fan-out-task', 'shipment']);
    const names = builtInWorkflows.map((definition) => definition.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(
      [...builtInCatalog.map((demo) => demo.name), ...builtInChildTypes].sort(),
    );
    for (const child of builtInChildTypes)
      expect(builtInCatalog.map((demo) => demo.name)).not.toContain(child);
  });

  it('declares every queue a built-in type starts onto', () => {
    const declared = builtInQueues.map((queue) => queue.name);
    for (const definition of builtInWorkflows)
      if (definition.queue !== undefined) expect(declared, definition.name).toContain(definition.queue);
    expect(builtInWorkflows.some((definition) => definition.queue !== undefined)).toBe(true);
  });

  it('runs every demo from its sample input on an engine that registers builtInWorkflows', async () => {
    const world = new TestWorld();
    const engine = await world.engine(builtInWorkflows, { queues: builtInQueues });
    const ids = new Map<string, string>();
    for (const demo of builtInCatalog) {
      const handle = await engine.start(demo.name, demo.sampleInput, { id: `sample-${demo.name}` });
      ids.set(demo.name, handle.workflowId);
    }
    // slow-steps works in real time (about five seconds); it only has to start its first step here.
    await vi.waitFor(async () =>
      expect(await engine.query('sample-slow-steps', 'progress')).toMatchObject({ current: 'extract' }),
    );
    await engine.terminate('sample-slow-steps', 'long enough');
    // manual-approval waits for an external completion (idle() would wait for it): give it one first.
    const token = await vi.waitFor(async () => {
      const leaf = (await engine.describe('sample-manual-approval')).pending?.leaves[0];
      expect(leaf?.completionToken).toBeTruthy();
      return leaf!.completionToken!;
    });
    await engine.completeActivity(token, { approved: true, by: 'ada' });

    await runFor(world, 5_000, 250);
    await engine.signal('sample-order', 'approve', { ok: true, by: 'ops' });
    const approving = engine.update('sample-approval', 'approve', { by: 'ada' });
    await runFor(world, 10_000, 250);
    await approving;
    // payment works in real time (about 1.5 s) once its queue admits it.
    await vi.waitFor(async () => expect((await engine.describe('sample-payment')).status).toBe('completed'), {
      timeout: 10_000,
    });

    const statuses = Object.fromEntries(
      await Promise.all(
        [...ids].map(async ([name, id]) => [name, (await engine.describe(id)).status] as const),
      ),
    );
    expect(statuses).toEqual({
      order: 'completed',
      countdown: 'completed',
      'fan-out': 'completed',
      saga: 'completed',
      flaky: 'completed',
      approval: 'completed',
      'manual-approval': 'completed',
      'slow-steps': 'terminated',
      payment: 'completed',
    });
    expect(await engine.handle('sample-saga').result()).toMatchObject({
      status: 'compensated',
      failedStep: 'car',
    });
    expect(await engine.handle('sample-flaky').result()).toEqual({
      succeededOnAttempt: 4,
      failedAttempts: 3,
    });
    expect(await engine.handle('sample-order').result()).toMatchObject({ status: 'delivered' });
  });
});
