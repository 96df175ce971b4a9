import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkflowCancelledError, WorkflowFailedError, type ActivityContext } from '../engine';
import { createTestEnvironment } from '../test-kit';
import { saga, sagaActivities, type SagaInput, type SagaStep } from './saga';
import { TestWorld, entriesOf } from './workflows.test-support';

const trip: SagaInput = {
  tripId: 'TRIP-7',
  traveller: 'Ada Lovelace',
  destination: 'Lisbon',
  nights: 3,
  failAt: null,
  failCompensationOf: null,
};

function spyOnActivities() {
  const book = vi.spyOn(sagaActivities, 'book');
  const cancel = vi.spyOn(sagaActivities, 'cancel');
  return {
    book,
    cancel,
    booked: () => book.mock.calls.map(([request]) => request.step),
    cancelled: () => cancel.mock.calls.map(([request]) => request.step),
  };
}

/** An activity body that works until the engine aborts it. */
function untilAborted({ signal }: ActivityContext): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
}

/** The saga on the test kit (shuttle/testing): an engine in memory, time skipped. */
async function runSaga(input: SagaInput) {
  const env = await createTestEnvironment({ workflows: [saga] });
  const handle = await env.engine.start(saga, input, { id: 'trip' });
  await env.idle();
  return { env, engine: env.engine, handle };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('saga', () => {
  it('books flight, hotel and car when nothing fails', async () => {
    const calls = spyOnActivities();
    const { engine, handle } = await runSaga(trip);
    expect(await handle.result()).toEqual({
      status: 'booked',
      tripId: 'TRIP-7',
      confirmations: { flight: 'FL-TRIP-7', hotel: 'HT-TRIP-7', car: 'CR-TRIP-7' },
    });
    expect(calls.booked()).toEqual(['flight', 'hotel', 'car']);
    expect(calls.cancel).not.toHaveBeenCalled();
    expect(await engine.query('trip', 'stage')).toBe('booked');
  });

  it('cancels the hotel, then the flight, when the car cannot be booked', async () => {
    const calls = spyOnActivities();
    const { engine, handle } = await runSaga({ ...trip, failAt: 'car' });

    expect(await handle.result()).toEqual({
      status: 'compensated',
      tripId: 'TRIP-7',
      failedStep: 'car',
      reason: 'BookingUnavailableError: No car available to Lisbon for Ada Lovelace.',
      compensated: ['hotel', 'flight'],
    });
    expect(calls.booked()).toEqual(['flight', 'hotel', 'car']); // non-retryable: the car was tried once
    expect(calls.cancelled()).toEqual(['hotel', 'flight']);
    expect(calls.cancel.mock.calls.map(([request]) => request.confirmation)).toEqual([
      'HT-TRIP-7',
      'FL-TRIP-7',
    ]);
    const timeline = await engine.timeline('trip');
    expect(entriesOf(timeline, 'activity-completed').map((entry) => entry.detail.name)).toEqual([
      'book-flight',
      'book-hotel',
      'cancel-hotel',
      'cancel-flight',
    ]);
    expect(entriesOf(timeline, 'activity-failed').map((entry) => entry.detail.name)).toEqual(['book-car']);
    expect(entriesOf(timeline, 'activity-retry-scheduled')).toEqual([]);
    expect(await engine.query('trip', 'bookings')).toEqual({
      booked: [
        { step: 'flight', confirmation: 'FL-TRIP-7' },
        { step: 'hotel', confirmation: 'HT-TRIP-7' },
      ],
      compensated: ['hotel', 'flight'],
    });
  });

  it.each([
    ['hotel', ['flight']],
    ['flight', []],
  ] as [SagaStep, SagaStep[]][])(
    'when the %s fails, compensates exactly the bookings made before it: %j',
    async (failAt, compensated) => {
      const calls = spyOnActivities();
      const { handle } = await runSaga({ ...trip, failAt });
      expect(await handle.result()).toMatchObject({ status: 'compensated', failedStep: failAt, compensated });
      expect(calls.cancelled()).toEqual(compensated);
      expect(calls.booked()).not.toContain('car');
    },
  );

  it('fails with SagaCompensationError when a cancellation keeps failing, after running the others', async () => {
    const calls = spyOnActivities();
    const { env, engine, handle } = await runSaga({ ...trip, failAt: 'car', failCompensationOf: 'hotel' });
    const start = env.now();
    // cancel-hotel: five attempts, backing off 500, 1,000, 2,000, 4,000 ms — skipped, not waited for.
    await expect(env.result(handle)).rejects.toThrow(WorkflowFailedError);
    expect(env.now() - start).toBe(500 + 1_000 + 2_000 + 4_000);
    await expect(handle.result()).rejects.toThrow(
      /SagaCompensationError: Trip TRIP-7: car failed and these bookings could not be cancelled: hotel HT-TRIP-7/,
    );
    expect(calls.cancelled()).toEqual(['hotel', 'hotel', 'hotel', 'hotel', 'hotel', 'flight']);
    expect(await engine.query('trip', 'stage')).toBe('failed');
    expect(await engine.query('trip', 'bookings')).toMatchObject({ compensated: ['flight'] });
  });

  it('compensates before ending cancelled when it is cancelled mid-booking', async () => {
    const calls = spyOnActivities();
    // The hotel booking is mocked (by activity name) to work until the engine aborts it.
    const env = await createTestEnvironment({
      workflows: [saga],
      activities: { 'book-hotel': untilAborted },
    });
    const handle = await env.engine.start(saga, trip, { id: 'trip' });
    await vi.waitFor(() => expect(env.activityCalls.map((call) => call.activity)).toEqual(['book-hotel']));
    expect(calls.booked()).toEqual(['flight']);

    await env.engine.cancel('trip', 'traveller changed plans');
    await expect(env.result(handle)).rejects.toThrow(WorkflowCancelledError);
    expect(calls.cancelled()).toEqual(['flight']);
    expect(await env.engine.query('trip', 'bookings')).toMatchObject({ compensated: ['flight'] });
    expect((await env.engine.describe('trip')).status).toBe('cancelled');
    await env.close();
  });

  it('recovers on a new engine during a compensation backoff without re-running recorded bookings', async () => {
    const original = sagaActivities.cancel;
    const calls = spyOnActivities();
    calls.cancel.mockImplementationOnce(async () => {
      throw new Error('hotel supplier timed out');
    });
    const world = new TestWorld();
    const a = await world.engine([saga]);
    await a.start(saga, { ...trip, failAt: 'car' }, { id: 'trip' });
    await world.idle();
    expect(await a.query('trip', 'stage')).toBe('cancelling-hotel');
    expect(calls.cancelled()).toEqual(['hotel']);
    calls.cancel.mockImplementation(original);

    await a.shutdown();
    const b = await world.engine([saga], { recover: true });
    await world.advance(500, { engines: [b] });
    await world.idle([b]);

    expect(await b.handle('trip').result()).toMatchObject({
      status: 'compensated',
      compensated: ['hotel', 'flight'],
    });
    expect(calls.booked()).toEqual(['flight', 'hotel', 'car']);
    expect(calls.cancelled()).toEqual(['hotel', 'hotel', 'flight']);
    const completed = entriesOf(await b.timeline('trip'), 'activity-completed');
    expect(completed.map((entry) => [entry.detail.name, entry.engineId])).toEqual([
      ['book-flight', a.id],
      ['book-hotel', a.id],
      ['cancel-hotel', b.id],
      ['cancel-flight', b.id],
    ]);
  });
});
