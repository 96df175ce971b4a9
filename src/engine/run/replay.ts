/**
 * Replay: re-runs a workflow's generator from the start and feeds it the results recorded in its history, in
 * order, up to the checkpoint's position; the first unrecorded operation is where the run continues.
 *
 * Guarantees:
 * - **Determinism check**: at every position the operation the code yields must be the one recorded (kind
 *   and name, and for `all` / `race` each member's); at the frontier it must be the one the checkpoint waits
 *   on; and the code may end only where the history ends. Otherwise the workflow fails with
 *   `NonDeterminismError` (position, recorded, new) on its first turn — replay itself never throws.
 * - **Patches** (`ctx.patched(id)`, `ctx.deprecatePatch(id)`): a patch call consumes a position only where the
 *   history recorded its marker (the run took the patch: `patched` is true); anywhere else in the history —
 *   the run was recorded before the patch — it answers false and the code's next operation takes that
 *   position. Where the history ends with no frontier (a new run, a fork), the call is live (workflow-run.ts).
 *   A marker the code no longer asks for is a divergence, and its error names the patch.
 * - **State**: update entries restore the state their handler produced, at the position it was applied, so
 *   the generator sees exactly the committed state (a failed replay restores the checkpoint's state).
 * - Nothing is written and no activity runs: replay only rebuilds the run's memory (run-state.ts).
 */
import { cloneJson, type JsonObject } from '../codec';
import { NonDeterminismError } from '../errors';
import { mutation } from '../mutations';
import type { HistoryEntry } from '../records';
import { describeCommand, type AnyWorkflowDefinition, type Command, type WorkflowContext } from '../workflow';
import type { RunHost } from './run-host';
import type { RunState } from './run-state';
import {
  describeRecorded,
  isOperationEntry,
  leafCommands,
  reconcileInPlace,
  resumeGenerator,
  stepGenerator,
  type Step,
} from './turn';

/** Where replay left the run, for its first turn. */
export type Replayed = {
  /** The history ends where the code ends: the run finishes on its first turn. */
  end: Step | null;
  /** The history ended exactly at this unrecorded command: the first turn advances to it. */
  pendingLiveCommand: Command | null;
  /** Replay failed (non-determinism, or the code threw): the first turn fails the workflow with it. */
  failure: Error | null;
};

/**
 * Replays `history` into `run`: creates the generator with `ctx`, feeds it the recorded results up to the
 * checkpoint's position, and leaves the frontier's command and results in `run` (or notes where the first
 * turn starts).
 */
export function replay(
  run: Pick<
    RunState,
    | 'id'
    | 'definition'
    | 'record'
    | 'checkpoint'
    | 'state'
    | 'replaying'
    | 'generator'
    | 'command'
    | 'results'
  > & { readonly host: Pick<RunHost, 'workflowInterceptors'> },
  ctx: WorkflowContext,
  history: HistoryEntry[],
): Replayed {
  const replayed: Replayed = { end: null, pendingLiveCommand: null, failure: null };
  const definition = run.definition!;
  const byPos = new Map<number, HistoryEntry[]>();
  for (const entry of history) {
    const list = byPos.get(entry.pos) ?? [];
    list.push(entry);
    byPos.set(entry.pos, list);
  }
  const target = run.checkpoint.position;
  run.replaying = true;
  run.state = {};
  try {
    run.generator = execute(run, definition, ctx);
    let next = stepGenerator(() => run.generator!.next());
    let pos = 0;
    for (;;) {
      if (next.kind !== 'yield') {
        if (pos < target)
          throw new NonDeterminismError(
            run.id,
            pos,
            describeRecorded(byPos.get(pos)),
            'the end of the workflow',
          );
        // The history ends where the code ends: the run finishes on its first turn.
        replayed.end = next;
        break;
      }
      const command = next.command;
      const entries = byPos.get(pos) ?? [];
      if (command.kind === 'patch') {
        const frontier = run.checkpoint.frontier;
        const marked = entries.some(
          (entry) => isOperationEntry(entry) && entry.kind === 'patch' && entry.name === command.name,
        );
        if (pos < target && marked) {
          pos++;
          next = resumeGenerator(run.generator!, { ok: true, value: command.deprecated ? undefined : true });
          continue;
        }
        if (pos < target || frontier?.pos === pos) {
          next = resumeGenerator(run.generator!, { ok: true, value: command.deprecated ? undefined : false });
          continue;
        }
        replayed.pendingLiveCommand = command;
        break;
      }
      checkDeterminism(run.id, pos, command, entries);
      for (const entry of entries) if (entry.t === 'update') restoreState(run, entry.stateAfter);
      if (pos < target) {
        run.results.load(entries);
        const outcome = run.results.outcome(command);
        if (!outcome)
          throw new NonDeterminismError(
            run.id,
            pos,
            describeRecorded(entries),
            `${describeCommand(command)} (unfinished in the history)`,
          );
        run.results.clear();
        pos++;
        next = resumeGenerator(run.generator!, outcome);
        continue;
      }
      // The frontier.
      const frontier = run.checkpoint.frontier;
      if (frontier && frontier.pos === pos) {
        const leaves = leafCommands(command);
        if (
          frontier.kind !== command.kind ||
          frontier.name !== command.name ||
          frontier.leaves.length !== leaves.length ||
          frontier.leaves.some((leaf, i) => leaf.kind !== leaves[i]!.kind || leaf.name !== leaves[i]!.name)
        )
          throw new NonDeterminismError(run.id, pos, describeCommand(frontier), describeCommand(command));
        run.command = command;
        if (mutation() === 'all-ignores-recorded-results' && command.kind === 'all') {
          // M4 (mutations.ts): the activity members' recorded results are forgotten and they run again.
          for (const leaf of frontier.leaves) if (leaf.kind === 'activity') leaf.done = false;
          run.results.load(
            entries.filter((entry) => !(isOperationEntry(entry) && entry.kind === 'activity')),
          );
        } else run.results.load(entries);
      } else {
        replayed.pendingLiveCommand = command;
      }
      break;
    }
  } catch (error) {
    replayed.failure = error instanceof Error ? error : new Error(String(error));
    run.state = cloneJson(run.checkpoint.state);
  } finally {
    run.replaying = false;
  }
  return replayed;
}

/** Throws `NonDeterminismError` unless every operation entry recorded at `pos` matches `command`. */
export function checkDeterminism(
  workflowId: string,
  pos: number,
  command: Command,
  entries: HistoryEntry[],
): void {
  const leaves = leafCommands(command);
  for (const entry of entries) {
    if (!isOperationEntry(entry)) continue;
    if (entry.member === undefined || entry.member < 0) {
      if (entry.kind === 'patch')
        throw new NonDeterminismError(
          workflowId,
          pos,
          `patch '${entry.name}' (this run took it: keep ctx.patched('${entry.name}'), or ctx.deprecatePatch('${entry.name}'), where it was until no such run is left)`,
          describeCommand(command),
        );
      if (entry.kind !== command.kind || entry.name !== command.name)
        throw new NonDeterminismError(workflowId, pos, `${describeCommand(entry)}`, describeCommand(command));
      continue;
    }
    const leaf = leaves[entry.member];
    if (command.kind !== 'all' && command.kind !== 'race')
      throw new NonDeterminismError(
        workflowId,
        pos,
        `a member of ${entry.kind === 'all' ? 'all' : 'a parallel operation'}`,
        describeCommand(command),
      );
    if (!leaf || leaf.kind !== entry.kind || leaf.name !== entry.name)
      throw new NonDeterminismError(
        workflowId,
        pos,
        `member #${entry.member} ${describeCommand(entry)}`,
        leaf
          ? `member #${entry.member} ${describeCommand(leaf)}`
          : `${describeCommand(command)} without member #${entry.member}`,
      );
  }
}

/**
 * The workflow's generator, through the workflow interceptors' `execute` (outermost first). They run on
 * every replay, as the workflow's own code does.
 */
function execute(
  run: Pick<RunState, 'id' | 'record' | 'checkpoint'> & {
    readonly host: Pick<RunHost, 'workflowInterceptors'>;
  },
  definition: AnyWorkflowDefinition,
  ctx: WorkflowContext,
): Generator<Command, unknown, unknown> {
  const interceptors = run.host.workflowInterceptors;
  let next = (input: unknown) => definition.run(ctx, input);
  const call = {
    workflowId: run.id,
    workflowType: run.record.type,
    version: run.record.version,
    run: run.record.run,
    isReplaying: run.checkpoint.position > 0,
  };
  for (let index = interceptors.length - 1; index >= 0; index--) {
    const interceptor = interceptors[index]!;
    const method = interceptor.execute;
    if (!method) continue;
    const following = next;
    next = (input) => {
      const generator = method.call(interceptor, { ...call, input }, following);
      if (typeof (generator as { next?: unknown } | null)?.next !== 'function')
        throw new TypeError(
          `Workflow interceptor #${index}'s execute returned ${generator === null ? 'null' : typeof generator}, not a generator: write it as a generator function that returns (yield* next(call.input)).`,
        );
      return generator;
    };
  }
  return next(run.record.input);
}

function restoreState(run: Pick<RunState, 'state'>, stateAfter: JsonObject): void {
  reconcileInPlace(run.state, cloneJson(stateAfter));
}
