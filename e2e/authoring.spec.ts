import { expect, test } from './fixtures/studio';

/**
 * End-to-end scenario 7 (docs/quality.md), authoring: a definition written and saved in tab A's editor
 * appears in tab B (open since before the save: registered through the change feed, not at start-up), is run
 * from B's Definitions screen, and when B closes, A takes the workflow over at epoch 2 and completes it —
 * running B's workflow on the code A wrote.
 */

const relay = `import { defineWorkflow } from 'shuttle';

type Input = { label: string };

export default defineWorkflow({
  name: 'relay',
  version: 1,
  description: 'Prepares, waits for the go signal, then finishes.',
  sampleInput: { label: 'baton' },
  *run(ctx, input: Input) {
    const prepared: string = yield* ctx.activity('prepare', () => \`prepared \${input.label}\`);
    const go = yield* ctx.waitForSignal<{ by: string }>('go');
    const finished: string = yield* ctx.activity('finish', () => \`\${prepared}, finished by \${go?.by}\`);
    return finished;
  },
});
`;

test('a definition saved in tab A appears in tab B, runs from B, and A takes it over when B closes', async ({
  studio: tabA,
  openTab,
}) => {
  const tabB = await openTab();
  const engineA = await tabA.engineId();
  const engineB = await tabB.engineId();
  await tabB.openScreen('definitions');
  await expect(tabB.definitions.item('relay')).toHaveCount(0);

  await tabA.page.bringToFront();
  await tabA.openScreen('definitions');
  const editorA = tabA.definitions;
  await editorA.newDefinition();
  await editorA.setSource(relay);
  await editorA.expectCompiles('relay', 1);
  await editorA.saveAndExpectSaved('relay', 1);

  // B lists it without a reload, and its engine has registered it: Run is enabled.
  await tabB.page.bringToFront();
  const editorB = tabB.definitions;
  await expect(editorB.item('relay', 1)).toBeVisible();
  await editorB.select('relay', 1);
  await expect(editorB.editor).toContainText("name: 'relay'");
  const dialog = await editorB.run();
  await expect(dialog.option('relay')).toHaveAttribute('aria-checked', 'true');
  await expect(dialog.input).toHaveValue(/"label": "baton"/);
  await dialog.setWorkflowId('relay-1');
  await dialog.submit();
  const detailB = tabB.detail;
  await expect(detailB.workflowId).toHaveAttribute('data-full-id', 'relay-1');
  await expect(detailB.ownerEngine).toHaveAttribute('data-engine-id', engineB);
  await expect(detailB.epoch).toHaveText('1');
  await expect(detailB.waitingOn).toContainText('go');

  await tabB.page.close();

  const detailA = await tabA.openWorkflow('relay-1');
  await expect(detailA.ownerEngine).toHaveAttribute('data-engine-id', engineA);
  await expect(detailA.epoch).toHaveText('2');
  await detailA.sendSignal('go', '{ "by": "tab A" }');
  await detailA.expectStatus('completed');
  expect((await tabA.describe('relay-1')).result).toBe('prepared baton, finished by tab A');
  expect(await detailA.custodyLaneEngineIds()).toEqual([engineB, engineA]);
  const timeline = await tabA.timeline('relay-1');
  const finish = timeline.find(
    (entry) => entry.kind === 'activity-completed' && entry.detail.name === 'finish',
  );
  expect(finish, 'A ran the last activity').toMatchObject({ engineId: engineA, epoch: 2 });
});
