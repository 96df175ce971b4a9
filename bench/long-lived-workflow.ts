/**
 * What both halves of the `long-lived` part share (bench/long-lived.ts in Node, bench/browser/long-lived.worker.ts
 * in Chromium): the looping workflow whose handoff is measured, and a storage wrapper that counts what an
 * engine reads. Imports only the engine and the storage interface, so the browser bundle can take it.
 */
import { defineWorkflow } from '../src/engine';
import type { ScanOptions, Storage } from '../src/storage';

export type TickerInput = { done: number; total: number; every: number };

/** One recorded operation per iteration; continues as new every `every`; parks on `stop` at `total`. */
export const ticker = defineWorkflow({
  name: 'bench-ticker',
  version: 1,
  *run(ctx, input: TickerInput) {
    let { done } = input;
    while (done < input.total) {
      yield* ctx.now();
      done++;
      if (done % input.every === 0 && done < input.total) return yield* ctx.continueAsNew({ ...input, done });
    }
    yield* ctx.waitForSignal('stop');
    return done;
  },
});

/** What an engine read from the store: requests, values returned and their characters. */
export type Reads = { requests: number; values: number; chars: number };

/**
 * `storage` as one engine sees it, counting what it reads (`get`, `getMany`, `scan`) into `reads`; writes and
 * the change feed pass through. Shows whether a takeover reads anything of the earlier runs, free of timing
 * noise.
 */
export function countingReads<S extends Storage>(storage: S, reads: Reads): S {
  const counted = (values: (string | null)[]) => {
    reads.requests++;
    for (const value of values)
      if (value !== null) {
        reads.values++;
        reads.chars += value.length;
      }
  };
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'get')
        return async (key: string) => {
          const value = await target.get(key);
          counted([value]);
          return value;
        };
      if (property === 'getMany')
        return async (keys: readonly string[]) => {
          const values = await target.getMany(keys);
          counted(values);
          return values;
        };
      if (property === 'scan')
        return async (prefix: string, options?: ScanOptions) => {
          const entries = await target.scan(prefix, options);
          counted(entries.map((entry) => entry.value));
          return entries;
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
