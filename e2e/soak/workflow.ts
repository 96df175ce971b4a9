/**
 * The browser soak's workflow, `soak-order`: authored in the studio (saved through `shuttle.saveDefinition`,
 * so every tab's engine registers it), and written so that its result depends only on its input, the
 * signals sent to it (in send order) and the set of updates sent to it.
 *
 * Every activity body first reports `(workflowId, step, attempt)` to the ledger (ledger.ts, a server in the
 * test process the engine knows nothing of) and fails if the ledger does not answer 200; then it takes
 * `activityMs`, so faults catch activities in flight; then it fails on purpose (`PlannedFailure`) on its
 * first `failures[step]` attempts, else returns its value.
 *
 *   reserve → a durable sleep → `signals` × waitForSignal('item') → all([pack, charge])
 *   → waitUntil(`updates` distinct values added by the update `add`) → confirm
 *
 * The update handler adds its value once (a value sent again — the test resends an update whose call failed,
 * which may or may not have been stored — changes nothing), so the result is exact whatever the faults did
 * to the callers; that no update request was applied twice is checked on the timeline (`update-applied` per
 * update id).
 */

export const soakWorkflowType = 'soak-order';

export type SoakInput = {
  n: number;
  /** The ledger's URL (ledger.ts). */
  ledger: string;
  /** How long each activity body takes after its ledger call, in ms. */
  activityMs: number;
  /** The durable sleep after `reserve`, in ms. */
  sleepMs: number;
  /** How many `item` signals it waits for. */
  signals: number;
  /** How many distinct values the update `add` must have added before it confirms. */
  updates: number;
  /** How many early attempts of each step fail on purpose. */
  failures: { reserve: number; pack: number; charge: number };
};

export type SoakResult = {
  n: number;
  reserved: string;
  items: string[];
  packed: string;
  charged: number;
  added: string[];
  confirmed: string;
};

/** The error name of an attempt that failed on purpose (after its ledger call). */
export const plannedFailure = 'PlannedFailure';

/** What a `soak-order` must return, given its input, the signal values in send order and the update values. */
export function expectedResult(
  input: SoakInput,
  signals: readonly string[],
  updates: readonly string[],
): SoakResult {
  return {
    n: input.n,
    reserved: `reserved-${input.n}`,
    items: [...signals],
    packed: `packed-${input.n}`,
    charged: input.n * 3 + 1,
    added: [...new Set(updates)].sort(),
    confirmed: `confirmed-${input.n}`,
  };
}

/** The definition's TypeScript source, as an author would save it in the studio. */
export const soakWorkflowSource = `import { defineWorkflow } from 'shuttle';

type Input = {
  n: number;
  ledger: string;
  activityMs: number;
  sleepMs: number;
  signals: number;
  updates: number;
  failures: { reserve: number; pack: number; charge: number };
};
type State = { added?: string[] };

const retry = { maxAttempts: 100, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 1000 };

/** One execution of an activity: the ledger first, then the work, then a planned failure or the value. */
async function execute<T>(input: Input, workflowId: string, step: string, attempt: number, failures: number, value: T): Promise<T> {
  const response = await fetch(input.ledger, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ workflowId, step, attempt }),
  });
  if (!response.ok)
    throw new Error('The ledger refused ' + workflowId + ' ' + step + ' attempt ' + attempt + ': ' + response.status + ' ' + (await response.text()));
  await new Promise((resolve) => setTimeout(resolve, input.activityMs));
  if (attempt <= failures) {
    const error = new Error('planned failure of ' + step + ', attempt ' + attempt);
    error.name = '${plannedFailure}';
    throw error;
  }
  return value;
}

export default defineWorkflow({
  name: '${soakWorkflowType}',
  version: 1,
  description: 'The browser soak: every activity reports to the ledger; signals and updates from any tab.',
  *run(ctx, input: Input) {
    const id = ctx.workflowId;
    const step = <T,>(name: string, failures: number, value: T) =>
      ctx.activity(name, ({ attempt }) => execute(input, id, name, attempt, failures, value), {
        retry,
        timeoutMs: 20000,
      });
    const reserved = yield* step('reserve', input.failures.reserve, 'reserved-' + input.n);
    yield* ctx.sleep(input.sleepMs);
    const items: string[] = [];
    for (let k = 0; k < input.signals; k++) {
      const payload = yield* ctx.waitForSignal<{ value: string }>('item');
      items.push(payload ? payload.value : '(no payload)');
    }
    const [packed, charged] = yield* ctx.all([
      step('pack', input.failures.pack, 'packed-' + input.n),
      step('charge', input.failures.charge, input.n * 3 + 1),
    ]);
    yield* ctx.waitUntil(() => ((ctx.state as State).added ?? []).length >= input.updates);
    const confirmed = yield* step('confirm', 0, 'confirmed-' + input.n);
    const added = [...((ctx.state as State).added ?? [])].sort();
    return { n: input.n, reserved, items, packed, charged, added, confirmed };
  },
  queries: {
    added: (state) => (state as State).added ?? [],
  },
  updates: {
    add: {
      validate: (value) => {
        if (typeof value !== 'string' || value.length === 0) throw new TypeError('add takes a non-empty string.');
      },
      handle: (state, value) => {
        const added = ((state as State).added ??= []);
        if (!added.includes(value as string)) added.push(value as string);
        return added.length;
      },
    },
  },
});
`;
