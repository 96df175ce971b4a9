import { expect, test } from './fixtures/studio';

/**
 * Versions in the editor: changing the body of a version that a running workflow uses is refused with a
 * warning that offers the next version, which then saves as a new version beside the old one; the old one
 * cannot be deleted while the workflow runs; a rename saves under the new name and drops the old one; the
 * running workflow finishes on the code it started with.
 */

const ticket = (closing: string) => `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'ticket',
  version: 1,
  *run(ctx) {
    const closed = yield* ctx.waitForSignal<{ by: string }>('close');
    return \`${closing} \${closed?.by}\`;
  },
});
`;

test('a changed version in use is saved as the next version; the old one stays while used; a rename moves it', async ({
  studio,
}) => {
  const saved = await studio.page.evaluate(
    (source) => window.shuttle!.saveDefinition(source),
    ticket('closed by'),
  );
  expect(saved).toMatchObject({ ok: true, version: 1 });
  await studio.startViaConsole('ticket', undefined, { id: 'ticket-1' });

  await studio.openScreen('definitions');
  const editor = studio.definitions;
  await editor.select('ticket', 1);
  await editor.setSource(ticket('resolved by'));
  await expect(editor.dirtyMarker).toHaveText('Unsaved changes');
  await editor.saveWithKeyboard();
  await expect(editor.versionWarning).toContainText('ticket version 1 is in use');
  await studio.page.getByTestId('definitions.bump-and-save').click();
  await expect(editor.item('ticket', 2)).toHaveAttribute('aria-current', 'page');
  await expect(editor.dirtyMarker).toBeHidden();
  await expect(studio.page.getByTestId('definitions.version')).toHaveText('v2');
  await expect(editor.editor).toContainText('version: 2');
  await expect(editor.item('ticket', 1)).toBeVisible();

  await editor.select('ticket', 1);
  await studio.page.getByTestId('definitions.delete').click();
  await studio.page.getByTestId('definitions.delete-confirm').click();
  await expect(studio.page.getByTestId('definitions.delete-error')).toContainText('still use');
  await studio.page.keyboard.press('Escape');
  await expect(studio.page.getByTestId('definitions.delete-dialog')).toBeHidden();

  await editor.select('ticket', 2);
  await studio.page.getByTestId('definitions.rename').click();
  await studio.page.getByTestId('definitions.rename-input').fill('support-ticket');
  await studio.page.getByTestId('definitions.rename-submit').click();
  await expect(editor.item('support-ticket', 2)).toHaveAttribute('aria-current', 'page');
  await expect(editor.fileName).toHaveText('support-ticket.ts');
  await expect(editor.item('ticket', 2)).toHaveCount(0);
  await expect(editor.item('ticket', 1)).toBeVisible();

  await studio.page.evaluate(() => window.shuttle!.signal('ticket-1', 'close', { by: 'Ada' }));
  await expect.poll(async () => (await studio.describe('ticket-1')).result).toBe('closed by Ada');
});
