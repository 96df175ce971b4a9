/**
 * Helpers for activity code (never for workflow code, which waits only with `ctx.sleep`).
 */

/**
 * Resolves after `ms` milliseconds of real time; rejects with `signal.reason` as soon as `signal` aborts, as
 * a well-behaved activity should when the engine aborts its attempt (timeout, cancellation, the workflow
 * decided without it, the engine lost the workflow).
 *
 * @example
 * yield* ctx.activity('charge-payment', async ({ signal }) => {
 *   await delay(120, signal); // stands in for a network call
 *   return { chargeId: 'ch_1' };
 * });
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
