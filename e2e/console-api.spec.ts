import { expect, test } from './fixtures/studio';

/**
 * The console API (`window.shuttle`) in the built studio: calls settle with the engine's values, and errors
 * reach the page with the engine's error names and detail fields.
 */

test('engine errors reach the page with their class name, message and detail fields', async ({ studio }) => {
  const workflowId = await studio.startViaConsole('countdown', { from: 50, tickMs: 1_000 }, { id: 'twice' });
  const error = await studio.page.evaluate(async (id) => {
    try {
      await window.shuttle!.start('countdown', { from: 1 }, { id });
      return null;
    } catch (caught) {
      const { name, message, workflowId, status } = caught as Error & Record<string, unknown>;
      return { name, message, workflowId, status, isError: caught instanceof Error };
    }
  }, workflowId);
  expect(error).toMatchObject({ workflowId: 'twice', status: 'running', isError: true });
  expect(error?.message).toContain("Workflow 'twice' already exists");
  expect(error?.name).toBe('WorkflowAlreadyExistsError');
});

test('waitFor resolves once the workflow reaches the status, and the timeline records each tick once', async ({
  studio,
}) => {
  const workflowId = await studio.startViaConsole('countdown', { from: 4, tickMs: 100 });
  const finished = await studio.page.evaluate((id) => window.shuttle!.waitFor(id, 'completed'), workflowId);
  expect(finished).toMatchObject({ status: 'completed', result: { counted: 4 }, epoch: 1 });
  const timeline = await studio.timeline(workflowId);
  expect(timeline.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(4);
  await expect(studio.rowStatus(workflowId)).toHaveText('completed');
});

test('shuttle.help() lists every method of the console API, chaos included, and each one exists', async ({
  studio,
}) => {
  const printed: string[] = [];
  studio.page.on('console', (message) => {
    if (message.type() === 'log') printed.push(message.text());
  });
  await studio.page.evaluate(() => window.shuttle!.help());
  await expect.poll(() => printed.join('\n')).toContain('chaos.freeze(engineId, seconds)');
  const help = printed.join('\n');
  const listed = [...help.matchAll(/\b([a-zA-Z]+(?:\.[a-zA-Z]+)?)\(/g)].map((match) => match[1]!);
  const names = [...new Set(listed)];
  expect(names).toEqual(
    expect.arrayContaining(['chaos.crash', 'chaos.shutdown', 'chaos.restart', 'engines']),
  );
  const missing = await studio.page.evaluate((names) => {
    const api = window.shuttle as unknown as Record<string, unknown>;
    return names.filter((name) => {
      const [head, tail] = name.split('.');
      const owner = tail ? (api[head!] as Record<string, unknown> | undefined) : api;
      return typeof owner?.[tail ?? head!] !== 'function';
    });
  }, names);
  expect(missing).toEqual([]);
});

test('a control message from a tab of another build is ignored with a warning', async ({ studio }) => {
  const warnings: string[] = [];
  studio.page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  const engineId = await studio.engineId();
  await studio.page.evaluate(
    ({ databaseName, engineId }) => {
      const channel = new BroadcastChannel(`shuttle-control:${databaseName}`);
      channel.postMessage({
        kind: 'control-request',
        v: 999,
        requestId: 'from-the-future',
        engineId,
        action: { type: 'crash' },
        from: null,
      });
      channel.close();
    },
    { databaseName: studio.options.databaseName, engineId },
  );
  await expect.poll(() => warnings.join('\n')).toMatch(/protocol version 999.*reload it/);
  // The request was not obeyed: the engine still runs.
  await studio.expectEngineRunning();
  expect((await studio.hello()).engineId).toBe(engineId);
});
