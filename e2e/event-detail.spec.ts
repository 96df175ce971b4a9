import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Event detail: the event list shortens long lines (a failed attempt's message, a takeover's
 * explanation); opening an event shows everything it recorded — the whole failure with its stack, the
 * attempt, the engine and epoch that wrote it — and the other entries of the same operation.
 */
test('an event opens in full: the failure with its stack, attempt, engine and epoch, and its operation', async ({
  studio,
}) => {
  const engineId = await studio.engineId();
  const workflowId = await studio.startViaConsole(
    'flaky',
    { failures: 1, maxAttempts: 3, initialIntervalMs: 100 },
    { id: 'event-detail-flaky' },
  );
  const detail = await studio.openWorkflow(workflowId);
  await detail.expectStatus('completed');
  const failed = detail.event('activity-failed').first();
  await expect(failed).toBeVisible();
  const full = (await studio.timeline(workflowId)).find((entry) => entry.kind === 'activity-failed')!;
  const error = (full.detail as { error: { name: string; message: string; stack?: string } }).error;

  await failed.getByTestId('detail.event-open').click();
  const dialog = studio.page.getByTestId('detail.event-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('detail.event-error')).toContainText(error.name);
  await expect(dialog.getByTestId('detail.event-error')).toContainText(error.message);
  if (error.stack) await expect(dialog.getByTestId('detail.event-error')).toContainText('Stack');
  await expect(dialog).toContainText('Attempt');
  await expect(dialog.getByTestId('detail.event-epoch')).toHaveText('1');
  await expect(dialog.getByTestId('detail.event-engine').locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    engineId,
  );
  // The operation's other entries: the attempts, the retry, the completion.
  await expect(dialog).toContainText('attempt 2 completed');
  await studio.page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

/** The event detail's parts that show what an event's operation recorded, and a way to open any event. */
function outcomeDialog(studio: StudioPage) {
  const page = studio.page;
  const dialog = page.getByTestId('detail.event-dialog');
  return {
    dialog,
    outcome: dialog.getByTestId('detail.event-outcome'),
    heading: dialog.getByTestId('detail.event-outcome-heading'),
    value: dialog.getByTestId('detail.event-outcome-value'),
    /** What the event carried in: a start's or a child's input, an update's argument. */
    inputHeading: dialog.getByTestId('detail.event-input-heading'),
    inputValue: dialog.getByTestId('detail.event-input-value'),
    /** Opens the detail of event `seq` (the list is virtualised: scrolls until its row is rendered). */
    async open(seq: number) {
      const row = page.locator(`[data-testid="detail.event"][data-seq="${seq}"]`);
      const list = page.getByTestId('detail.events');
      await list.evaluate((element) => (element.scrollTop = 0));
      for (let step = 0; step < 100 && (await row.count()) === 0; step++)
        await list.evaluate((element) => (element.scrollTop += 120));
      await row.getByTestId('detail.event-open').click();
      await expect(dialog).toBeVisible();
      await expect(dialog).toContainText(`Event #${seq}`);
    },
    async close() {
      await page.keyboard.press('Escape');
      await expect(dialog).toBeHidden();
    },
  };
}

/** How the event detail titles a value: its size as stored (compact JSON, UTF-8). */
const sized = (heading: string, json: unknown) =>
  `${heading} · ${new TextEncoder().encode(JSON.stringify(json)).length} bytes`;

/**
 * The value an event's operation recorded: timeline entries carry none, so the event detail reads it from the
 * run's history — an activity's result, a signal's payload, also on the entry that received the signal. And
 * what an event carried in, whole: the start's input, an update's argument, the input a child was started with.
 */
test('an event shows what it carried and what its operation recorded: input, update argument, child input, activity result, signal payload', async ({
  studio,
}) => {
  const orderId = 'E-77';
  const input = {
    orderId,
    customer: 'ada@example.com',
    items: [
      { sku: 'TEA-GREEN-250G', quantity: 2, unitPriceCents: 850 },
      { sku: 'MUG-STONEWARE', quantity: 1, unitPriceCents: 1_800 },
    ],
    shippingAddress: '12 Analytical Row, London',
    packingMs: 100,
    transitMs: 100,
  };
  const workflowId = await studio.startViaConsole('order', input, { id: 'event-detail-order' });
  const detail = await studio.openWorkflow(workflowId);
  await expect(detail.waitingOn).toContainText('approve');
  const newAddress = '221B Baker Street, London';
  await detail.sendUpdate('changeAddress', JSON.stringify(newAddress));
  const payload = { ok: true, by: 'e2e-reviewer' };
  await detail.sendSignal('approve', JSON.stringify(payload));
  await detail.expectStatus('completed');
  const timeline = await studio.timeline(workflowId);
  const { heading, value, outcome, inputHeading, inputValue, open, close } = outcomeDialog(studio);

  // The start's input, whole.
  const started = timeline.find((entry) => entry.kind === 'started')!;
  await open(started.seq);
  await expect(inputHeading).toHaveText(sized('Input', input));
  expect(await inputValue.textContent()).toBe(JSON.stringify(input, null, 2));
  await close();

  // The update's argument, beside the state after it.
  const updated = timeline.find((entry) => entry.kind === 'update-applied')!;
  await open(updated.seq);
  await expect(inputHeading).toHaveText(sized('Argument', newAddress));
  expect(await inputValue.textContent()).toBe(JSON.stringify(newAddress, null, 2));
  await expect(heading).toContainText('Result');
  await expect(value).toContainText(newAddress);
  await close();

  // The input the shipment child was started with.
  const childStarted = timeline.find((entry) => entry.kind === 'child-started')!;
  const childId = childStarted.kind === 'child-started' ? childStarted.detail.childId : '';
  const childInput = (await studio.describe(childId)).input;
  expect(childInput).toMatchObject({ orderId, address: newAddress });
  await open(childStarted.seq);
  await expect(inputHeading).toHaveText(sized('Input', childInput));
  expect(await inputValue.textContent()).toBe(JSON.stringify(childInput, null, 2));
  await close();

  // The reservation activity's result.
  const reserved = timeline.find(
    (entry) => entry.kind === 'activity-completed' && entry.detail.name === 'reserve-inventory',
  )!;
  await open(reserved.seq);
  const reservation = { reservationId: `res-${orderId}`, lines: 2 };
  await expect(heading).toHaveText(sized('Result', reservation));
  expect(await value.textContent()).toBe(JSON.stringify(reservation, null, 2));
  await close();

  // The consumed signal's payload, and the same payload on the entry that received it.
  const consumed = timeline.find((entry) => entry.kind === 'signal-consumed')!;
  await open(consumed.seq);
  await expect(heading).toHaveText(sized('Payload', payload));
  expect(await value.textContent()).toBe(JSON.stringify(payload, null, 2));
  await close();
  const received = timeline.find((entry) => entry.kind === 'signal-received')!;
  await open(received.seq);
  await expect(heading).toHaveText(sized('Payload', payload));
  expect(await value.textContent()).toBe(JSON.stringify(payload, null, 2));
  await expect(outcome).toContainText(`Consumed by #${consumed.seq}`);
  await close();
});

/**
 * An operation still waiting has no outcome yet, and the event says so; once it finishes, the open event
 * shows the result. A failed operation shows its error.
 */
test('an event of an operation still waiting says its outcome is not recorded yet, then shows it', async ({
  studio,
}) => {
  const completeLater = async (workflowId: string, settle: (token: string) => Promise<unknown>) => {
    await expect
      .poll(async () => (await studio.describe(workflowId)).pending?.leaves[0]?.completionToken)
      .toBeTruthy();
    const token = (await studio.describe(workflowId)).pending!.leaves[0]!.completionToken!;
    await settle(token);
  };
  const { heading, value, outcome, open, close } = outcomeDialog(studio);

  const approved = await studio.startViaConsole(
    'manual-approval',
    { requestId: 'PO-7', summary: 'two chairs' },
    { id: 'event-detail-approved' },
  );
  await studio.openWorkflow(approved);
  await expect
    .poll(async () => (await studio.timeline(approved)).some((e) => e.kind === 'activity-started'))
    .toBe(true);
  const started = (await studio.timeline(approved)).find((entry) => entry.kind === 'activity-started')!;
  await open(started.seq);
  await expect(outcome).toContainText('Not recorded yet');
  await expect(value).toHaveCount(0);
  // Completed from outside while the event is open: it now shows the result.
  const decision = { approved: true, by: 'ada', comment: 'fine' };
  await completeLater(approved, (token) =>
    studio.page.evaluate(([token, decision]) => window.shuttle!.completeActivity(token, decision), [
      token,
      decision,
    ] as const),
  );
  await expect(heading).toHaveText(sized('Result', decision));
  expect(await value.textContent()).toBe(JSON.stringify(decision, null, 2));
  await close();

  const refused = await studio.startViaConsole(
    'manual-approval',
    { requestId: 'PO-8', summary: 'a piano' },
    { id: 'event-detail-refused' },
  );
  const detail = await studio.openWorkflow(refused);
  await completeLater(refused, (token) =>
    studio.page.evaluate(
      (token) => window.shuttle!.failActivity(token, { name: 'Rejected', message: 'Over budget' }),
      token,
    ),
  );
  await detail.expectStatus('failed');
  const failed = (await studio.timeline(refused)).find((entry) => entry.kind === 'activity-failed')!;
  await open(failed.seq);
  await expect(heading).toHaveText('Error');
  await expect(outcome).toContainText('ActivityFailedError');
  await expect(outcome).toContainText('Rejected: Over budget');
  await close();
});
