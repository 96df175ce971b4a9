/**
 * What a workflow gives back when it ends: its place in its queue (if it never got in), the queue and key
 * slots it held, and its singleton or debounce key. Added to every terminal transition's own batch —
 * a run's last commit (run/commit.ts), terminate, time-out and the cancel of a pending workflow
 * (workflow-writes.ts `changeStatus`) — so a slot is freed exactly when its workflow ends: never counted
 * after, never leaked, whoever ends it. Continue-as-new is not an end: the next run keeps the slot.
 */
import type { Operation } from '../../storage/types';
import { keys } from '../keys';
import type { WorkflowRecord } from '../records';

export function queueReleaseOperations(record: WorkflowRecord): Operation[] {
  const operations: Operation[] = [];
  const { queue, startKey } = record;
  if (queue) {
    if (record.status === 'pending')
      operations.push({ type: 'delete', key: keys.queueWait(queue.name, queue.order, record.id) });
    if (queue.slot !== undefined)
      operations.push({ type: 'delete', key: keys.queueSlot(queue.name, queue.slot) });
    if (queue.keySlot !== undefined && queue.key !== undefined)
      operations.push({ type: 'delete', key: keys.queueKeySlot(queue.name, queue.key, queue.keySlot) });
  }
  if (startKey)
    operations.push({ type: 'delete', key: keys.startKey(startKey.scope, startKey.kind, startKey.key) });
  return operations;
}
