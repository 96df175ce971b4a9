/**
 * What the studio shows of each built-in demo definition: its source text (the module as shipped, imported
 * as a string with Vite's `?raw`, which Vitest understands too), its human title, and whether it is a child
 * type that is only started by a parent. The editor shows the source read-only and offers it as a template.
 *
 * Every built-in type's module is named after the type (`fan-out-task` → `fan-out-task.ts`); the test beside
 * this module checks that every registered built-in has its source here and that the source declares it.
 */
import { builtInCatalog, builtInChildTypes, builtInWorkflows } from '../workflows';
import approval from '../workflows/approval.ts?raw';
import countdown from '../workflows/countdown.ts?raw';
import fanOutTask from '../workflows/fan-out-task.ts?raw';
import fanOut from '../workflows/fan-out.ts?raw';
import flaky from '../workflows/flaky.ts?raw';
import manualApproval from '../workflows/manual-approval.ts?raw';
import order from '../workflows/order.ts?raw';
import payment from '../workflows/payment.ts?raw';
import saga from '../workflows/saga.ts?raw';
import shipment from '../workflows/shipment.ts?raw';
import slowSteps from '../workflows/slow-steps.ts?raw';

import type { BuiltInInfo } from '../host/authoring/definition-store';

export type { BuiltInInfo };

const sources: Readonly<Record<string, string>> = {
  approval,
  countdown,
  'fan-out-task': fanOutTask,
  'fan-out': fanOut,
  flaky,
  'manual-approval': manualApproval,
  order,
  payment,
  saga,
  shipment,
  'slow-steps': slowSteps,
};

/** Per built-in type name: source, title, child-only flag. */
export const builtInInfo: ReadonlyMap<string, BuiltInInfo> = new Map(
  builtInWorkflows.map((definition) => [
    definition.name,
    {
      source: sources[definition.name] ?? null,
      title: builtInCatalog.find((demo) => demo.name === definition.name)?.title ?? null,
      childOnly: builtInChildTypes.includes(definition.name),
    },
  ]),
);
