/**
 * The queues domain of the wire contract: the workflow queues of a store (declared in code, with
 * `createEngine({ queues })` or `defineQueue`), read-only — their limits, who holds their slots, who waits; and the activity limits (`activityLimits`),
 * the other knob of how much runs at once.
 */
import type { ActivityLimitInfo, QueuePosition, QueueView } from '../engine';
import { method, type Empty } from './declare';

/**
 * An activity group as `activityLimits` shows it. `declared`: the answering engine declares the group, so its
 * limits, its holders and what runs and waits there are its own (`engine.activityLimits()`). Otherwise
 * (`declared: false`) the group was seen only in the store, as slots other engines hold now (activity limits
 * are declared in code and not written to the store): its `running` holders, judged live by their engines'
 * sessions, and no limits (`concurrency` and `perEngine` null, `runningHere`/`waitingHere` 0).
 */
export type ActivityLimitView = ActivityLimitInfo & { declared: boolean };

export const queueMethods = {
  /** Every queue declared on the engine or, by another engine, in the store; by name. */
  queues: method<Empty, QueueView[]>({}),
  /** One queue; `QueueNotFoundError` when no engine declared one of that name. */
  describeQueue: method<{ name: string }, QueueView>({ name: 'string' }),
  /**
   * Where a workflow stands in its queue: waiting (its position, 1 = admitted next) or admitted (its slot);
   * null for a workflow not started onto a queue, or finished.
   */
  queuePosition: method<{ workflowId: string }, QueuePosition | null>({ workflowId: 'string' }),
  /**
   * The activity groups (`createEngine({ activityLimits })`): those the engine declares, then every other
   * group with a slot held in the store now; by name.
   */
  activityLimits: method<Empty, ActivityLimitView[]>({}),
} as const;
