/**
 * Saga: books a trip — flight, then hotel, then car — as three activities. When a booking fails, the
 * bookings already made are cancelled in reverse order (the compensations) and the workflow completes with a
 * `compensated` result that names the failed step and what was undone. Cancelling the workflow compensates
 * the same way before it ends `cancelled` (compensations run after the cancellation, so they are not
 * themselves cancelled).
 *
 * Compensations retry generously, since they must not be skipped; if one still fails, the remaining ones run
 * anyway and the workflow fails with `SagaCompensationError` listing what needs a human.
 *
 * Demo controls: `failAt` makes that booking fail (non-retryable: the supplier has nothing available);
 * `failCompensationOf` makes that booking's cancellation fail on every attempt.
 */
import {
  delay,
  ActivityFailedError,
  CancelledError,
  defineWorkflow,
  type ActivityContext,
  type WorkflowContext,
} from '../engine';

export const sagaSteps = ['flight', 'hotel', 'car'] as const;
export type SagaStep = (typeof sagaSteps)[number];

export type SagaInput = {
  tripId: string;
  traveller: string;
  destination: string;
  nights: number;
  /** Demo control: the booking that fails. Default: none, every booking succeeds. */
  failAt?: SagaStep | null;
  /** Demo control: the booking whose cancellation fails on every attempt. Default: none. */
  failCompensationOf?: SagaStep | null;
};

export type SagaResult =
  | { status: 'booked'; tripId: string; confirmations: Record<SagaStep, string> }
  | {
      status: 'compensated';
      tripId: string;
      failedStep: SagaStep;
      reason: string;
      /** The bookings cancelled, in the order they were cancelled (the reverse of booking). */
      compensated: SagaStep[];
    };

type SagaStage = `booking-${SagaStep}` | `cancelling-${SagaStep}` | 'booked' | 'compensated' | 'failed';

type SagaState = {
  stage: SagaStage;
  booked: { step: SagaStep; confirmation: string }[];
  compensated: SagaStep[];
  failedStep: SagaStep | null;
  failure: string | null;
};

/** A supplier had nothing to offer: retrying will not help. */
export class BookingUnavailableError extends Error {
  override name = 'BookingUnavailableError';
}

/** Some compensations failed after all their retries; the listed bookings still exist. */
export class SagaCompensationError extends Error {
  override name = 'SagaCompensationError';
}

const bookingCodes: Record<SagaStep, string> = { flight: 'FL', hotel: 'HT', car: 'CR' };

/**
 * The saga's side effects. Workflow code calls them only through `ctx.activity`; tests may spy on them to
 * count invocations and see their order.
 */
export const sagaActivities = {
  async book(
    request: { step: SagaStep; trip: SagaInput },
    { signal }: ActivityContext,
  ): Promise<{ confirmation: string }> {
    await delay(70, signal);
    const { step, trip } = request;
    if (trip.failAt === step)
      throw new BookingUnavailableError(`No ${step} available to ${trip.destination} for ${trip.traveller}.`);
    return { confirmation: `${bookingCodes[step]}-${trip.tripId}` };
  },

  async cancel(
    request: { step: SagaStep; confirmation: string; trip: SagaInput },
    { signal }: ActivityContext,
  ): Promise<{ cancelled: string }> {
    await delay(50, signal);
    if (request.trip.failCompensationOf === request.step)
      throw new Error(`The ${request.step} supplier refused to cancel ${request.confirmation}.`);
    return { cancelled: request.confirmation };
  },
};

function assertSagaInput(input: SagaInput): void {
  if (typeof input?.tripId !== 'string' || input.tripId.length === 0)
    throw new TypeError('saga input: tripId must be a non-empty string.');
  for (const key of ['failAt', 'failCompensationOf'] as const) {
    const value = input[key];
    if (value !== undefined && value !== null && !sagaSteps.includes(value))
      throw new TypeError(
        `saga input: ${key} must be one of ${sagaSteps.join(', ')} (or null); got ${JSON.stringify(value)}.`,
      );
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof ActivityFailedError) return `${error.failure.name}: ${error.failure.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export const saga = defineWorkflow({
  name: 'saga',
  version: 1,
  description:
    'Books a flight, a hotel and a car; when a booking fails ("failAt"), cancels the ones made, in reverse ' +
    'order, and completes "compensated". Cancelling the workflow compensates too.',
  sampleInput: {
    tripId: 'TRIP-2026-042',
    traveller: 'Ada Lovelace',
    destination: 'Lisbon',
    nights: 3,
    failAt: 'car',
    failCompensationOf: null,
  },
  *run(ctx: WorkflowContext<SagaState>, input: SagaInput) {
    assertSagaInput(input);
    const state = ctx.state;
    const initial: SagaState = {
      stage: 'booking-flight',
      booked: [],
      compensated: [],
      failedStep: null,
      failure: null,
    };
    Object.assign(state, initial);

    let failure: { step: SagaStep; error: unknown } | null = null;
    for (const step of sagaSteps) {
      state.stage = `booking-${step}`;
      try {
        const { confirmation } = yield* ctx.activity(
          `book-${step}`,
          (activity) => sagaActivities.book({ step, trip: input }, activity),
          {
            retry: { maxAttempts: 3, initialIntervalMs: 500, nonRetryable: ['BookingUnavailableError'] },
            timeoutMs: 10_000,
          },
        );
        state.booked.push({ step, confirmation });
      } catch (error) {
        failure = { step, error };
        break;
      }
    }

    if (!failure) {
      state.stage = 'booked';
      const confirmations = Object.fromEntries(
        state.booked.map(({ step, confirmation }) => [step, confirmation]),
      ) as Record<SagaStep, string>;
      const booked: SagaResult = { status: 'booked', tripId: input.tripId, confirmations };
      return booked;
    }

    state.failedStep = failure.step;
    state.failure = reasonOf(failure.error);
    const stuck: string[] = [];
    for (const { step, confirmation } of [...state.booked].reverse()) {
      state.stage = `cancelling-${step}`;
      try {
        yield* ctx.activity(
          `cancel-${step}`,
          (activity) => sagaActivities.cancel({ step, confirmation, trip: input }, activity),
          { retry: { maxAttempts: 5, initialIntervalMs: 500, maxIntervalMs: 5_000 }, timeoutMs: 10_000 },
        );
        state.compensated.push(step);
      } catch (error) {
        stuck.push(`${step} ${confirmation} (${reasonOf(error)})`);
      }
    }

    if (stuck.length > 0) {
      state.stage = 'failed';
      throw new SagaCompensationError(
        `Trip ${input.tripId}: ${failure.step} failed and these bookings could not be cancelled: ${stuck.join('; ')}.`,
      );
    }
    state.stage = 'compensated';
    if (failure.error instanceof CancelledError) throw failure.error;
    const compensated: SagaResult = {
      status: 'compensated',
      tripId: input.tripId,
      failedStep: failure.step,
      reason: state.failure,
      compensated: state.compensated,
    };
    return compensated;
  },
  queries: {
    stage: (state) => state.stage ?? 'starting',
    bookings: (state) => ({ booked: state.booked ?? [], compensated: state.compensated ?? [] }),
  },
});

export default saga;
