/**
 * The queues domain of the wire contract: the workflow queues of a store (declared in code, with
 * `createEngine({ queues })` or `defineQueue`), read-only — their limits, who holds their slots, who waits.
 */
import type { QueuePosition, QueueView } from '../engine';
import { method, type Empty } from './declare';

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
} as const;
