import { expect, test } from './fixtures/studio';

/**
 * Drafts and edits of definitions live only in the tab's memory: leaving the tab with unsaved work asks
 * first (the browser's "leave site?" prompt), and a tab with nothing unsaved closes without asking.
 */

test('leaving a tab with an unsaved definition asks first; a tab with nothing unsaved does not', async ({
  studio,
  openTab,
}) => {
  await studio.openScreen('definitions');
  await studio.definitions.newDefinition();
  await expect(studio.definitions.dirtyMarker).toBeVisible();
  const asked: string[] = [];
  studio.page.on('dialog', (dialog) => {
    asked.push(dialog.type());
    void dialog.dismiss(); // stay on the page
  });
  await studio.page.close({ runBeforeUnload: true });
  await expect.poll(() => asked).toEqual(['beforeunload']);
  expect(studio.page.isClosed()).toBe(false);

  const clean = await openTab();
  await clean.openScreen('definitions'); // an interaction, so the browser would allow a prompt
  const cleanAsked: string[] = [];
  clean.page.on('dialog', (dialog) => {
    cleanAsked.push(dialog.type());
    void dialog.dismiss();
  });
  await clean.page.close({ runBeforeUnload: true });
  await expect.poll(() => clean.page.isClosed()).toBe(true);
  expect(cleanAsked).toEqual([]);
});
