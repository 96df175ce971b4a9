/**
 * Test driver for the built-in demos: the engine's `TestWorld` (a shared MemoryStorage, a SimulatedClock,
 * manual background tasks, an in-memory liveness oracle) and small readers over the durable timeline.
 *
 * Tests only. Production workflow modules import nothing but the engine's public API (`../engine`); the
 * driver needs MemoryStorage, which that API does not export, hence the one exception below.
 */
import { entriesOf as entriesOfKind, type Engine, type TimelineEntry, type TimelineKind } from '../engine';
import { TestWorld, type TestEngine } from '../engine/engine.test-support';

export { TestWorld, type TestEngine };

/**
 * Moves simulated time forward `ms` in steps of `stepMs`, letting every activity in flight finish (in real
 * time) after each step, so that work started by a timer is done before the next timer is due.
 */
export async function runFor(world: TestWorld, ms: number, stepMs: number): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    await world.advance(Math.min(stepMs, ms - done));
    await world.idle();
  }
}

/** The kinds of a workflow's timeline, in order. */
export async function timelineKinds(engine: Engine, workflowId: string): Promise<TimelineKind[]> {
  return (await engine.timeline(workflowId)).map((entry) => entry.kind);
}

/** Timeline entries of one kind, typed by it; optionally only those whose `detail.name` is `name`. */
export function entriesOf<K extends TimelineKind>(
  timeline: readonly TimelineEntry[],
  kind: K,
  name?: string,
): Extract<TimelineEntry, { kind: K }>[] {
  return entriesOfKind(timeline, kind).filter(
    (entry) => name === undefined || ('name' in entry.detail && entry.detail.name === name),
  );
}
