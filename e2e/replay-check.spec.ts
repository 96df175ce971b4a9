import { expect, test } from './fixtures/studio';

/**
 * Check replay on a workflow's page: the run's history replayed against the definitions the tab's engine
 * has now. Clean for the code that recorded it; after the definition's body is changed under the same
 * version (saved with force), the page says where it diverges and what was recorded there; the same change
 * behind `ctx.patched` replays clean again.
 */

const ticket = (before: string) => `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'ticket',
  version: 1,
  *run(ctx) {
    ${before}
    const closed = yield* ctx.waitForSignal<{ by: string }>('close');
    return \`closed by \${closed?.by}\`;
  },
});
`;

test('Check replay says whether the code registered now replays a run, and where it diverges', async ({
  studio,
}) => {
  const save = (source: string) =>
    studio.page.evaluate((text) => window.shuttle!.saveDefinition(text, { force: true }), source);
  expect(await save(ticket(''))).toMatchObject({ ok: true, version: 1 });
  await studio.startViaConsole('ticket', undefined, { id: 'ticket-replay' });
  const detail = await studio.openWorkflow('ticket-replay');
  await detail.expectStatus('running');
  const button = studio.page.getByTestId('detail.check-replay-button');
  const result = studio.page.getByTestId('detail.check-replay-result');

  await button.click();
  await expect(result).toContainText('Replays clean');
  await expect(result).toContainText('0 operations, the same as recorded');

  expect(await save(ticket('yield* ctx.sleep(1);'))).toMatchObject({ ok: true });
  await button.click();
  await expect(result).toContainText('Diverges at #0');
  await expect(result).toContainText(
    "The history recorded signal 'close'; the code registered now yields sleep",
  );

  expect(await save(ticket("if (yield* ctx.patched('pause-first')) yield* ctx.sleep(1);"))).toMatchObject({
    ok: true,
  });
  await button.click();
  await expect(result).toContainText('Replays clean');
});
