/**
 * Simulated work for the demo activities: a real-time delay standing in for a network call or a batch job,
 * so the studio's timeline shows activities with a duration.
 *
 * It uses only standard JavaScript timers, so it runs the same in Node tests and in the studio's Web Worker,
 * and it honours the attempt's `AbortSignal`: when the engine aborts an attempt (timeout, cancellation, the
 * engine shutting down or losing the workflow) the delay rejects at once with the signal's reason, as a
 * well-behaved activity should.
 *
 * Only activities call this. Workflow code waits with `ctx.sleep`, never with real timers.
 */

/**
 * Resolves after `ms` milliseconds of real time; rejects with `signal.reason` as soon as `signal` aborts.
 *
 * @example
 * ctx.activity('charge-payment', async ({ signal }) => {
 *   await simulateWork(120, signal);
 *   return { chargeId: 'ch_1' };
 * });
 */
export function simulateWork(ms: number, signal?: AbortSignal): Promise<void> {
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
