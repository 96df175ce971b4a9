/**
 * The built-in demo definitions, registered by every studio engine and shown (as source) in the editor.
 *
 * - `builtInWorkflows`: every definition an engine must register to run the demos, child types included.
 * - `builtInCatalog`: what the studio offers in its start dialog — one entry per top-level demo, with the
 *   definition's own description and sample input. Child types (`shipment`, `fan-out-task`) are registered
 *   but not offered: each demo entry names the child types it starts in `childTypes`, and
 *   `builtInChildTypes` lists them all.
 * - `builtInQueues`: the queues the demos start onto (`payment` → `payments`); every engine that registers
 *   the demos declares them.
 * - `builtInActivityLimits`: the demos' activity limits (`payment`'s capture: one at a time through
 *   `payment-gateway`); every engine that runs the demos declares them.
 */
import type { AnyWorkflowDefinition, EngineOptions, QueueDefinition } from '../engine';
import { approval } from './approval';
import { countdown } from './countdown';
import { fanOut } from './fan-out';
import { fanOutTask } from './fan-out-task';
import { flaky } from './flaky';
import { manualApproval } from './manual-approval';
import { order } from './order';
import { payment, paymentActivityLimits, paymentsQueue } from './payment';
import { saga } from './saga';
import { shipment } from './shipment';
import { slowSteps } from './slow-steps';

export {
  approval,
  countdown,
  fanOut,
  fanOutTask,
  flaky,
  manualApproval,
  order,
  payment,
  paymentsQueue,
  saga,
  shipment,
  slowSteps,
};

/** One demo the studio offers in its start dialog. */
export type BuiltInDemo = {
  /** The workflow type, as passed to `engine.start`. */
  name: string;
  version: number;
  /** A short human title for lists and menus. */
  title: string;
  description: string;
  /** Prefilled (as JSON) in the start dialog. */
  sampleInput: unknown;
  /** Child workflow types this demo starts; registered, never offered on their own. */
  childTypes: readonly string[];
};

function demo(
  definition: AnyWorkflowDefinition,
  title: string,
  children: readonly AnyWorkflowDefinition[] = [],
): BuiltInDemo {
  if (definition.description === undefined || definition.sampleInput === undefined)
    throw new TypeError(`Built-in demo '${definition.name}' needs a description and a sampleInput.`);
  return Object.freeze({
    name: definition.name,
    version: definition.version,
    title,
    description: definition.description,
    sampleInput: definition.sampleInput,
    childTypes: Object.freeze(children.map((child) => child.name)),
  });
}

/** The top-level demos, in the order the studio lists them. */
export const builtInCatalog: readonly BuiltInDemo[] = Object.freeze([
  demo(order, 'Order fulfilment', [shipment]),
  demo(countdown, 'Countdown'),
  demo(fanOut, 'Fan-out of children', [fanOutTask]),
  demo(saga, 'Booking saga'),
  demo(flaky, 'Flaky activity'),
  demo(approval, 'Approval by update'),
  demo(manualApproval, 'Manual approval (external activity)'),
  demo(slowSteps, 'Slow steps'),
  demo(payment, 'Queued payment'),
]);

/** Child-only workflow types: registered so any engine can run them, not offered as demos. */
export const builtInChildTypes: readonly string[] = Object.freeze([shipment.name, fanOutTask.name]);

/** Every built-in definition, child types included: what an engine registers. */
export const builtInWorkflows: readonly AnyWorkflowDefinition[] = Object.freeze([
  order,
  shipment,
  countdown,
  fanOut,
  fanOutTask,
  saga,
  flaky,
  approval,
  manualApproval,
  slowSteps,
  payment,
]);

/** The queues the demos start onto: declared by every engine that registers `builtInWorkflows`. */
export const builtInQueues: readonly QueueDefinition[] = Object.freeze([paymentsQueue]);

/** The demos' activity limits: declared by every engine that runs `builtInWorkflows`. */
export const builtInActivityLimits: NonNullable<EngineOptions['activityLimits']> = Object.freeze({
  ...paymentActivityLimits,
});
