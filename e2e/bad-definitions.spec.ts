import { expect, test } from './fixtures/studio';

/**
 * End-to-end scenario 10 (docs/quality.md), the definition half: a definition with a syntax error, one that
 * throws while it loads, and one whose top level never finishes each get a clear message with its line in the
 * editor (inline and in the problems list, which jumps to the line); saving is refused and nothing is
 * written; the engine goes on running, and the corrected definition saves.
 */

const header = `import { defineWorkflow } from 'shuttle';\n`;
const body = `export default defineWorkflow({
  name: 'careful',
  version: 1,
  *run(ctx) {
    yield* ctx.sleep(10);
    return 'ok';
  },
});
`;

test('a syntax error, a throw on load and an endless top level each get a clear message with a line, and nothing is saved', async ({
  studio,
}) => {
  test.setTimeout(60_000);
  await studio.openScreen('definitions');
  const editor = studio.definitions;
  await editor.newDefinition();

  // A syntax error, on line 7.
  await editor.setSource(header + body.replace("return 'ok';", "return 'ok' +;"));
  await expect(editor.problems).toHaveCount(1);
  await expect(editor.problems.first()).toHaveAttribute('data-kind', 'syntax');
  await expect(editor.problems.first()).toHaveAttribute('data-line', '7');
  // Worded by the engine worker's compiler until the editor's TypeScript check answers, then as TypeScript
  // words it (the editor lists a syntax error both report once): either is the right message.
  await expect(editor.problems.first()).toContainText(/Syntax error: Unexpected token|Expression expected/);
  await expect(editor.problems.first()).toContainText('line 7');
  await expect(editor.inlineErrors).toHaveCount(1);
  await editor.saveWithKeyboard();
  await expect(editor.saveRefused).toContainText('Not saved');

  // Throws while it loads, on line 3.
  await editor.setSource(
    `${header}const settings: any = undefined;\nconst retries = settings.retries;\n${body}`,
  );
  await expect(editor.problems.first()).toHaveAttribute('data-kind', 'evaluation');
  await expect(editor.problems.first()).toHaveAttribute('data-line', '3');
  await expect(editor.problems.first()).toContainText(
    "TypeError: Cannot read properties of undefined (reading 'retries')",
  );
  await editor.problems.first().click();
  await expect(editor.cursorLine).toContainText('const retries = settings.retries;');
  await editor.saveButton.click();
  await expect(editor.saveRefused).toContainText('Not saved');

  // Never finishes loading: checked in a throwaway worker, which is stopped after 2 s.
  await editor.setSource(`${header}while (Date.now() > 0) {}\n${body}`);
  await expect(editor.problems.first()).toContainText('did not finish loading', { timeout: 15_000 });
  await expect(editor.problems.first()).toHaveAttribute('data-line', '1');

  // Nothing was saved, and the engine runs on.
  await expect(editor.savedItems).toHaveCount(0);
  const saved = await studio.page.evaluate(async () =>
    (await window.shuttle!.definitions()).filter((definition) => !definition.builtIn),
  );
  expect(saved).toEqual([]);
  await expect(studio.engineStatus).toHaveText('running');

  // Fixed, it saves and runs.
  await editor.setSource(header + body);
  await editor.expectCompiles('careful', 1);
  await expect(editor.problems).toHaveCount(0);
  await editor.saveAndExpectSaved('careful', 1);
  const id = await studio.startViaConsole('careful');
  await expect.poll(async () => (await studio.describe(id)).status, { timeout: 10_000 }).toBe('completed');
});
