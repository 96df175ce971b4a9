import { expect, test } from './fixtures/studio';

/**
 * End-to-end scenario 5 (docs/quality.md), cross-tab signal and update: tab B's UI sends an update and a
 * signal to a workflow owned by tab A; A applies both (its engine wrote them on the timeline), B sees the
 * update's answer, and the order completes with B's approval.
 */

test('a signal and an update sent from another tab’s page are applied by the owning tab', async ({
  studio: tabA,
  openTab,
}) => {
  const engineA = await tabA.engineId();
  const workflowId = await tabA.startViaConsole(
    'order',
    {
      orderId: 'X-7',
      customer: 'grace@example.com',
      items: [{ sku: 'TEA', quantity: 1, unitPriceCents: 900 }],
      shippingAddress: '1 First Street, Springfield',
      packingMs: 300,
      transitMs: 300,
    },
    { id: 'order-cross-tab' },
  );
  const tabB = await openTab();
  const detail = await tabB.openWorkflow(workflowId);
  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', engineA);
  await expect(detail.waitingOn).toContainText("signal 'approve'", { timeout: 15_000 });

  const answer = await detail.sendUpdate('changeAddress', '"221B Baker Street, London"');
  expect(answer).toContain('221B Baker Street, London');
  await detail.sendSignal('approve', '{ "ok": true, "by": "tab B" }');

  await detail.expectStatus('completed', 30_000);
  const timeline = await tabB.timeline(workflowId);
  const applied = timeline.find((entry) => entry.kind === 'update-applied');
  const consumed = timeline.find((entry) => entry.kind === 'signal-consumed');
  expect(applied?.engineId, 'A applied the update').toBe(engineA);
  expect(consumed?.engineId, 'A consumed the signal').toBe(engineA);
  await expect(detail.event('update-applied')).toBeVisible();
  const result = (await tabB.describe(workflowId)).result as { approvedBy: string };
  expect(result.approvedBy).toBe('tab B');
  expect(await tabA.query<{ shippingAddress: string }>(workflowId, 'summary')).toMatchObject({
    shippingAddress: '221B Baker Street, London',
  });
});
