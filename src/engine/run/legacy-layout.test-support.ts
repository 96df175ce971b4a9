/**
 * The workflows of the layout-1 fixtures (`fixtures/layout-1.json`, `fixtures/layout-1-finished.json`):
 * stores written by the engine before commit records, where every history entry was its own `wf-hist:` key
 * and every timeline record was keyed by its last entry's sequence number. `legacy-layout.test.ts` loads
 * those stores and runs these workflows on, so their code must stay exactly as it was when the fixtures
 * were written.
 */
import { defineWorkflow } from '../workflow';

/** Activities, deterministic values, an update, a sleep and a durable wait; parked on signal `go`. */
export const legacyMixed = defineWorkflow({
  name: 'legacy-mixed',
  version: 1,
  *run(ctx, input: { label: string }) {
    ctx.state.label = input.label;
    ctx.state.count = 0;
    const first = yield* ctx.activity('first', () => 1);
    const at = yield* ctx.now();
    const roll = yield* ctx.random();
    const [left, right] = yield* ctx.all([ctx.activity('left', () => 'L'), ctx.activity('right', () => 'R')]);
    yield* ctx.sleep(500);
    const payload = yield* ctx.waitForSignal<string>('go');
    let sum = first;
    for (let step = 0; step < 3; step++) sum += yield* ctx.activity('after', () => step + 10);
    return { label: input.label, sum, left, right, payload, count: ctx.state.count, at, roll };
  },
  updates: {
    increment: {
      handle: (state, arg) => {
        state.count = (state.count as number) + (arg as number);
        return state.count;
      },
    },
  },
  queries: { count: (state) => state.count },
});

/** Parked in a long sleep: the new engine fires the durable timer the old one armed. */
export const legacySleeper = defineWorkflow({
  name: 'legacy-sleeper',
  version: 1,
  *run(ctx) {
    const before = yield* ctx.activity('before', () => 'b');
    yield* ctx.sleep(60_000);
    const after = yield* ctx.activity('after', () => 'a');
    return `${before}${after}`;
  },
});

/** Its activity was running when the old engine stopped: the new engine runs it again as attempt 2. */
export const legacyInterrupted = defineWorkflow({
  name: 'legacy-interrupted',
  version: 1,
  *run(ctx) {
    const one = yield* ctx.activity('one', () => 1);
    const two = yield* ctx.activity('two', () => legacyActivityTwo());
    return one + two;
  },
});

let activityTwo: () => number | Promise<number> = () => 2;

/** What `legacy-interrupted`'s second activity does (the fixture's writer made it hang). */
export function legacyActivityTwo(): number | Promise<number> {
  return activityTwo();
}

export function setLegacyActivityTwo(fn: () => number | Promise<number>): void {
  activityTwo = fn;
}

export const legacyWorkflows = [legacyMixed, legacySleeper, legacyInterrupted];

/**
 * The one workflow of `fixtures/layout-1-finished.json`, which the old engine ran to completion (id
 * `finished`, input { order: 'o-7' }, signal approve 'yes'). The fixture's `script` holds a copy of it.
 */
export const legacyFinished = defineWorkflow({
  name: 'legacy-finished',
  version: 1,
  *run(ctx, input: { order: string }) {
    ctx.state.order = input.order;
    const price = yield* ctx.activity('price', () => 42);
    yield* ctx.sleep(1000);
    const approval = yield* ctx.waitForSignal<string>('approve');
    const receipt = yield* ctx.activity('receipt', () => `${input.order}:${price}:${approval}`);
    return { receipt };
  },
  queries: { order: (state) => state.order },
});
