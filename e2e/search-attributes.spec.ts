import { expect, test } from './fixtures/studio';

/**
 * Search attributes in the studio: the order demo sets customer, amount and orderId. The list shows a
 * column per attribute; an attribute filter typed as `customer = …` becomes a chip (in the URL) and leaves
 * only the matching rows; a second chip narrows by a range; a malformed condition is refused where it was
 * typed; removing the chips brings every row back; the workflow page shows the attributes in its facts. The
 * console API refuses a bad condition with the engine's error.
 *
 * Budgets: three orders reach their approval wait within seconds; every wait is the default expectation.
 */

const order = (orderId: string, customer: string, quantity: number) => ({
  orderId,
  customer,
  items: [{ sku: 'TEA-GREEN-250G', quantity, unitPriceCents: 850 }],
  shippingAddress: '12 Analytical Row, London',
  paymentGatewayFailures: 0,
  packingMs: 100,
  transitMs: 100,
  approvalTimeoutMs: 600_000,
});

test('attribute chips filter the list through the index; columns and the workflow page show the attributes', async ({
  studio,
}) => {
  const { page } = studio;
  const orders: [string, string, number][] = [
    ['attr-ada', 'ada@example.com', 1],
    ['attr-grace-1', 'grace@example.com', 1],
    ['attr-grace-2', 'grace@example.com', 2],
  ];
  for (const [id, customer, quantity] of orders)
    await studio.startViaConsole('order', order(id, customer, quantity), { id });
  for (const [id] of orders)
    await expect.poll(async () => (await studio.describe(id)).pending?.name).toBe('approve');

  // Every row, with a column per attribute.
  for (const [id] of orders) await expect(studio.row(id)).toHaveCount(1);
  await expect(page.getByTestId('workflows.attribute-column')).toHaveText(['amount', 'customer', 'orderId']);
  await expect(
    studio.row('attr-grace-2').locator('[data-testid="workflows.row-attribute"][data-attribute="amount"]'),
  ).toHaveText('17');

  // A chip: only grace's orders.
  const input = page.getByTestId('workflows.attribute-input');
  await input.fill('customer = grace@example.com');
  await input.press('Enter');
  await expect(page.getByTestId('workflows.attribute-chip')).toHaveText(['customer=grace@example.com']);
  await expect(page).toHaveURL(/where=customer%3Dgrace%40example\.com/);
  await expect(studio.row('attr-ada')).toHaveCount(0);
  await expect(studio.row('attr-grace-1')).toHaveCount(1);
  await expect(studio.row('attr-grace-2')).toHaveCount(1);

  // A malformed condition is refused where it was typed; nothing is added.
  await input.fill('amount ~ 3');
  await input.press('Enter');
  await expect(page.getByTestId('workflows.attribute-problem')).toContainText("is not 'name op value'");
  await expect(page.getByTestId('workflows.attribute-chip')).toHaveCount(1);

  // A second chip, a range: the order of two items only.
  await input.fill('amount >= 10');
  await input.press('Enter');
  await expect(page.getByTestId('workflows.attribute-chip')).toHaveCount(2);
  await expect(studio.row('attr-grace-1')).toHaveCount(0);
  await expect(studio.row('attr-grace-2')).toHaveCount(1);

  // Removing the chips, one by one, brings every row back.
  await page.getByTestId('workflows.attribute-chip-remove').first().click();
  await expect(page.getByTestId('workflows.attribute-chip')).toHaveText(['amount>=10']);
  // (ada's order, 8.50, is under the range too)
  await expect(studio.row('attr-grace-2')).toHaveCount(1);
  await expect(studio.row('attr-ada')).toHaveCount(0);
  await page.getByTestId('workflows.attribute-chip-remove').click();
  await expect(page.getByTestId('workflows.attribute-chip')).toHaveCount(0);
  for (const [id] of orders) await expect(studio.row(id)).toHaveCount(1);

  // The console API (the WebSocket protocol's list) refuses a bad condition with the engine's error.
  const refused = await page.evaluate(async () =>
    window.shuttle!.list({ where: ['amount>=lots'] }).then(
      () => null,
      (error: Error) => ({ name: error.name, message: error.message }),
    ),
  );
  expect(refused).toEqual({
    name: 'InvalidSearchAttributeError',
    message: "list: attribute 'amount' is declared 'number' and takes a finite number; got \"lots\".",
  });

  // The workflow page shows them; each is a link to the list filtered by it.
  await studio.openWorkflow('attr-grace-2');
  await expect(page.getByTestId('detail.attributes')).toHaveText(
    'amount 17 · customer grace@example.com · orderId attr-grace-2',
  );
  await page.getByTestId('detail.attribute').filter({ hasText: 'customer' }).getByRole('link').click();
  await expect(page.getByTestId('workflows.attribute-chip')).toHaveText(['customer=grace@example.com']);
  await expect(studio.row('attr-grace-1')).toHaveCount(1);
  await expect(studio.row('attr-ada')).toHaveCount(0);
});
