/**
 * The frontier: the operation a run waits on, and its leaves (the operation itself, or each member of an
 * `all` / `race`). `arm` makes a command the frontier and arms its leaves — durable timers for sleeps and
 * timeouts, buffered signals handed over, predicates checked, children prepared — all into the turn, so they
 * are written with the checkpoint that names them. `resolveLeaf` records a leaf's result as a history entry
 * and retires its timer; the frontier is decided once its results add up to an outcome (run-state.ts).
 *
 * Everything here changes only the run's memory and the turn: nothing is written until the turn commits.
 */
import { normalizePayload, type Json } from '../codec';
import { recordedFailure, serializeError, type SerializedError } from '../errors';
import { keys } from '../keys';
import { decodeSignal, type HistoryEntry, type Leaf, type TimerRecord } from '../records';
import { composeInterceptors, type Command, type LeafCommand } from '../workflow';
import type { RunState } from './run-state';
import { leafCommands, type Turn } from './turn';

/** Makes `command` the frontier and arms its leaves (timers, signal checks, children, predicates). */
export async function arm(
  run: Pick<
    RunState,
    'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'results' | 'signals' | 'signalsStale' | 'isLive'
  >,
  turn: Turn,
  command: Exclude<
    Command,
    {
      kind:
        | 'now'
        | 'random'
        | 'uuid'
        | 'patch'
        | 'continue-as-new'
        | 'signal-workflow'
        | 'cancel-workflow'
        | 'set-attributes';
    }
  >,
  pos: number,
): Promise<void> {
  const now = run.host.clock.now();
  const commands = leafCommands(command);
  const composite = command.kind === 'all' || command.kind === 'race';
  const leaves: Leaf[] = commands.map((leaf, member) => ({
    member,
    kind: leaf.kind,
    name: leaf.name,
    done: false,
  }));
  run.command = command;
  run.results.clear();
  run.checkpoint = {
    ...run.checkpoint,
    frontier: { pos, kind: command.kind, name: command.name, since: now, leaves },
  };
  turn.dirty = true;
  for (const [member, leafCommand] of commands.entries()) {
    if (composite && run.results.outcome(command)) break; // a race already decided by an earlier member
    const leaf = leaves[member]!;
    switch (leafCommand.kind) {
      case 'activity':
        leaf.attempt = 1;
        if (leafCommand.options.completion === 'external') leaf.external = true;
        break;
      case 'sleep':
        armTimer(run, turn, leaf, 'sleep', now + leafCommand.durationMs);
        turn.note('timer-armed', {
          pos,
          member,
          durationMs: leafCommand.durationMs,
          dueAt: now + leafCommand.durationMs,
        });
        break;
      case 'signal':
        if (leafCommand.timeoutMs !== undefined)
          armTimer(run, turn, leaf, 'timeout', now + leafCommand.timeoutMs);
        if (run.signalsStale) await refreshSignals(run, turn);
        consumeSignals(run, turn);
        break;
      case 'until':
        if (evaluatePredicate(run, turn, leaf, leafCommand.predicate)) break;
        if (leafCommand.timeoutMs !== undefined)
          armTimer(run, turn, leaf, 'timeout', now + leafCommand.timeoutMs);
        break;
      case 'child':
        await armChild(run, turn, leaf, leafCommand, pos, composite);
        break;
    }
    if (!run.isLive()) return;
  }
}

/** Arms a durable timer for `leaf` of the frontier, written by the turn's commit. */
export function armTimer(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint'>,
  turn: Turn,
  leaf: Leaf,
  purpose: TimerRecord['purpose'],
  dueAt: number,
): void {
  const pos = run.checkpoint.frontier!.pos;
  const key = keys.timer(dueAt, run.id, `${run.record.run}.${pos}.${leaf.member}.${purpose}`);
  const timer: TimerRecord = {
    workflowId: run.id,
    purpose,
    run: run.record.run,
    pos,
    member: leaf.member,
  };
  turn.put(key, JSON.stringify(timer));
  leaf.timerKey = key;
  leaf.dueAt = dueAt;
  turn.afterCommit.push(() => run.host.timerArmed(dueAt));
}

/**
 * Prepares the child of `leaf` (its creation joins the turn's commit); a child that is not awaited resolves
 * the leaf with its id at once.
 */
async function armChild(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint' | 'results'>,
  turn: Turn,
  leaf: Leaf,
  command: Extract<LeafCommand, { kind: 'child' }>,
  pos: number,
  composite: boolean,
): Promise<void> {
  const closePolicy = command.options.parentClosePolicy ?? 'await';
  // Default ids name the run after the first: a run that continued as new (or an id started again) may have
  // left a child of the same position running (close policy 'abandon').
  const runPart = run.record.run > 1 ? `.r${run.record.run}` : '';
  const childId =
    command.options.id ?? `${run.id}${runPart}.child-${pos}${composite ? `.${leaf.member}` : ''}`;
  leaf.childId = childId;
  leaf.closePolicy = closePolicy;
  let input: unknown;
  try {
    input = normalizePayload(command.input, `Input of child workflow '${childId}'`, run.host.maxPayloadBytes);
  } catch (error) {
    resolveLeaf(run, turn, leaf, { ok: false, error: serializeError(error) });
    return;
  }
  const plan = await run.host.prepareChild({
    parent: run.record,
    pos,
    member: leaf.member,
    childId,
    workflowType: command.name,
    input,
    closePolicy,
  });
  if (!plan.ok) {
    resolveLeaf(run, turn, leaf, { ok: false, error: plan.error });
    return;
  }
  turn.conditions.push(...plan.conditions);
  for (const operation of plan.operations) turn.operations.push(operation);
  turn.afterCommit.push(plan.afterCommit);
  turn.note('child-started', {
    pos,
    member: leaf.member,
    childId,
    workflowType: command.name,
    parentClosePolicy: closePolicy,
  });
  if (closePolicy === 'terminate')
    run.checkpoint = {
      ...run.checkpoint,
      linkedChildren: [...run.checkpoint.linkedChildren, childId],
    };
  if (closePolicy !== 'await') resolveLeaf(run, turn, leaf, { ok: true, value: childId });
}

/** Checks a `waitUntil` predicate; resolves its leaf when it holds (or throws). True when resolved. */
export function evaluatePredicate(
  run: Pick<RunState, 'checkpoint' | 'results' | 'host'>,
  turn: Turn,
  leaf: Leaf,
  predicate: () => boolean,
): boolean {
  let satisfied: boolean;
  try {
    satisfied = predicate() === true;
  } catch (error) {
    // Recorded like any failure of workflow code: mapped to the author's lines, bounded (errors.ts).
    resolveLeaf(run, turn, leaf, {
      ok: false,
      error: turn.keepStack(recordedFailure(error, run.host.mapStack)),
    });
    return true;
  }
  if (satisfied) {
    resolveLeaf(run, turn, leaf, { ok: true, value: true });
    turn.note('wait-completed', {
      pos: run.checkpoint.frontier!.pos,
      member: leaf.member,
      satisfied: true,
    });
  }
  return satisfied;
}

/** Checks the frontier's `waitUntil` predicates again (after updates changed the state). */
export function recheckPredicates(
  run: Pick<RunState, 'checkpoint' | 'command' | 'results' | 'host'>,
  turn: Turn,
): void {
  const frontier = run.checkpoint.frontier;
  if (!frontier || !run.command) return;
  const commands = leafCommands(run.command);
  for (const leaf of frontier.leaves) {
    if (leaf.kind !== 'until' || leaf.done) continue;
    if (frontier.kind === 'race' && run.results.count > 0) return;
    evaluatePredicate(
      run,
      turn,
      leaf,
      (commands[leaf.member] as Extract<LeafCommand, { kind: 'until' }>).predicate,
    );
  }
}

/**
 * Reads the workflow's buffered signals again (oldest first), leaving out those `turn` already consumed
 * (their deletes are still in the turn): at a turn's start (the `signals` event) or in its middle (a signal
 * wait reached after signals were written while the run waited on something else).
 */
export async function refreshSignals(
  run: Pick<RunState, 'id' | 'host' | 'signals' | 'signalsStale'>,
  turn: Turn,
): Promise<void> {
  run.signalsStale = false;
  const consumed = new Set(
    turn.operations.flatMap((operation) => (operation.type === 'delete' ? [operation.key] : [])),
  );
  const entries = await run.host.storage.scan(keys.signalPrefix(run.id));
  run.signals = entries
    .filter(({ key }) => !consumed.has(key))
    .map(({ key, value }) => ({ key, record: decodeSignal(key, value) }));
}

/** Hands buffered signals, oldest first, to the signal leaves waiting on their names. */
export function consumeSignals(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'results' | 'signals'>,
  turn: Turn,
): void {
  const frontier = run.checkpoint.frontier;
  if (!frontier || !run.command) return;
  for (const leaf of frontier.leaves) {
    if (leaf.kind !== 'signal' || leaf.done) continue;
    if (frontier.kind === 'race' && run.results.count > 0) return;
    const index = run.signals.findIndex((signal) => signal.record.name === leaf.name);
    if (index < 0) continue;
    const [signal] = run.signals.splice(index, 1);
    turn.delete(signal!.key);
    turn.note('signal-received', { name: leaf.name, sentBy: signal!.record.sentBy }, signal!.record.sentAt);
    turn.note('signal-consumed', { pos: frontier.pos, member: leaf.member, name: leaf.name });
    resolveLeaf(run, turn, leaf, deliveredSignal(run, frontier.pos, leaf.name, signal!.record.payload));
    turn.kinds.push('signal');
  }
}

/**
 * What `ctx.waitForSignal` receives for a signal: its payload, through the workflow interceptors' `signal`
 * (live only: what they return is recorded, and replay reads the record). A throw is what the wait throws.
 */
function deliveredSignal(
  run: Pick<RunState, 'id' | 'host' | 'record'>,
  position: number,
  name: string,
  payload: Json | undefined,
): { ok: true; value?: Json } | { ok: false; error: SerializedError } {
  const interceptors = run.host.workflowInterceptors;
  if (!interceptors.some((interceptor) => interceptor.signal))
    return payload === undefined ? { ok: true } : { ok: true, value: payload };
  const call = {
    workflowId: run.id,
    workflowType: run.record.type,
    version: run.record.version,
    run: run.record.run,
    name,
    payload,
    position,
  };
  try {
    const value = composeInterceptors(interceptors, 'signal', call, (delivered) => delivered)(payload);
    const stored = normalizePayload(
      value,
      `Payload of signal '${name}' (as workflow interceptors delivered it)`,
      run.host.maxPayloadBytes,
    ) as Json | undefined;
    return stored === undefined ? { ok: true } : { ok: true, value: stored };
  } catch (error) {
    return { ok: false, error: recordedFailure(error, run.host.mapStack) };
  }
}

/** Records a leaf's result (history entry) and retires its timer. */
export function resolveLeaf(
  run: Pick<RunState, 'checkpoint' | 'results'>,
  turn: Turn,
  leaf: Leaf,
  result: { ok: true; value?: Json } | { ok: false; error: SerializedError },
): void {
  const frontier = run.checkpoint.frontier!;
  const composite = frontier.kind === 'all' || frontier.kind === 'race';
  const base = {
    t: 'op' as const,
    pos: frontier.pos,
    kind: leaf.kind,
    name: leaf.name,
    ...(composite ? { member: leaf.member } : {}),
  };
  const entry: Extract<HistoryEntry, { t: 'op' }> = result.ok
    ? { ...base, ok: true, ...(result.value === undefined ? {} : { value: result.value }) }
    : { ...base, ok: false, error: result.error };
  leaf.done = true;
  if (leaf.timerKey) {
    turn.delete(leaf.timerKey);
    delete leaf.timerKey;
    delete leaf.dueAt;
  }
  turn.history.push(entry);
  const member = composite ? leaf.member : 0;
  run.results.record(member, entry);
}

/** The frontier's leaf `member`, if the frontier is still at `pos`. */
export function leafAt(run: Pick<RunState, 'checkpoint'>, pos: number, member: number): Leaf | undefined {
  const frontier = run.checkpoint.frontier;
  if (!frontier || frontier.pos !== pos) return undefined;
  return frontier.leaves[member];
}
