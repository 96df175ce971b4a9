/**
 * Chaos: `freeze` stalls the worker's event loop with a busy-wait, like a frozen tab (engine-host.ts says
 * where it fits). It waits for a good moment first: just after a claim renewal, with no turn in progress, so
 * the stall begins a whole renew interval before the next renewal; and it stalls only at the start of a task
 * with no storage call in flight (storage-activity.ts), since a transaction left open across the stall would
 * block every tab's database. The host marks its presence `frozen`, pushes the status, answers, then stalls;
 * afterwards it carries on and pushes `running`. Its engine then finds its claims taken over: the activity
 * that completes first tries to commit and is refused by the epoch fence.
 */
import type { Engine, EngineEvent } from '../engine';
import type { HostState, HostStatus } from '../protocol';
import { protocolMisuse } from './handlers/types';
import type { StorageActivity } from './storage-activity';

export type ChaosFreezeDeps = {
  /** Whether this host may be frozen from inside (a tab: yes; a server process: freeze it as a process). */
  allowed: boolean;
  renewIntervalMs: number;
  now(): number;
  engine(): Promise<Engine>;
  state(): HostState;
  /** Moves the host to `next` if its lifecycle allows it; whether it moved. */
  setStatus(next: HostStatus): boolean;
  /** Writes the presence record with this status (and the engine's current facts). */
  writePresence(status: 'frozen' | 'running', frozenUntil?: number): Promise<void> | undefined;
  activity(): StorageActivity | null;
};

/**
 * Prepares a freeze of `seconds`: returns when the host is marked frozen, with the stall to run right after
 * the response is posted.
 */
export async function prepareFreeze(
  deps: ChaosFreezeDeps,
  seconds: number,
): Promise<{ frozenUntil: number; stall: () => void }> {
  if (!deps.allowed)
    throw protocolMisuse(
      'This engine runs in a server process: freeze it as a process (SIGSTOP) from the fleet, not from inside.',
    );
  if (!(seconds > 0 && seconds <= 600))
    throw protocolMisuse(`freeze: seconds must be above 0 and at most 600, not ${seconds}.`);
  const engine = await deps.engine();
  if (deps.state() !== 'running')
    throw Object.assign(new Error(`Only a running engine can be frozen; this one is ${deps.state()}.`), {
      name: 'InvalidWorkflowStateError',
    });
  // Start just after a renewal, so the whole stall counts against the claim TTL and the next renewal is a
  // full interval away (the activity in flight then finishes first when the stall ends).
  if (engine.metrics().claimsHeld > 0) await nextEvent(engine, 'claim.renewed', deps.renewIntervalMs * 2);
  await withTimeout(engine.idle({ activities: false }), deps.renewIntervalMs / 2);
  const since = deps.now();
  const frozenUntil = since + Math.round(seconds * 1_000);
  if (!deps.setStatus({ state: 'frozen', since, frozenUntil }))
    throw Object.assign(new Error(`The engine stopped before it could be frozen (${deps.state()}).`), {
      name: 'InvalidWorkflowStateError',
    });
  await deps.writePresence('frozen', frozenUntil);
  const activity = deps.activity();
  const stall = () => {
    // Busy-waits until `frozenUntil` (nothing else of this worker runs meanwhile), then carries on.
    while (deps.now() < frozenUntil) {
      // frozen on purpose: no timers, no renewals, no messages, no storage transaction open
    }
    if (deps.setStatus({ state: 'running', since: deps.now() })) void deps.writePresence('running');
  };
  return { frozenUntil, stall: () => (activity ? activity.whenQuiet(stall) : stall()) };
}

/** Resolves at the engine's next event of `type`, or after `timeoutMs`. */
function nextEvent(engine: Engine, type: EngineEvent['type'], timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    const unsubscribe = engine.subscribe((event) => {
      if (event.type === type) done();
    });
    const timer = setTimeout(done, timeoutMs);
  });
}

/** Resolves when `promise` settles or after `ms`, whichever comes first; never rejects. */
function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}
