/**
 * The retry policy of activities: after a failed attempt, whether another one runs and after how long.
 * Defaults: 3 attempts, 1 s, ×2, capped at 30 s. Errors named in `nonRetryable` — and payloads that could
 * never be stored, and cancellations — fail the activity at once. Retry waits are durable timers.
 */
import type { RetryPolicy } from '../workflow';

export const defaultRetry = {
  maxAttempts: 3,
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maxIntervalMs: 30_000,
} as const;

/** Failures no retry can fix: the value itself cannot be stored. */
const neverRetried = ['PayloadNotSerializableError', 'PayloadTooLargeError'];

/**
 * How long to wait before the next attempt after attempt `attempt` failed with an error named
 * `failureName`, or null when the activity has failed for good.
 */
export function nextRetryWait(
  policy: RetryPolicy | undefined,
  attempt: number,
  failure: { name: string; cancelled: boolean },
): number | null {
  const retry = { ...defaultRetry, ...policy };
  const nonRetryable = new Set([...(policy?.nonRetryable ?? []), ...neverRetried]);
  if (attempt >= retry.maxAttempts || nonRetryable.has(failure.name) || failure.cancelled) return null;
  return Math.min(retry.initialIntervalMs * retry.backoffCoefficient ** (attempt - 1), retry.maxIntervalMs);
}
