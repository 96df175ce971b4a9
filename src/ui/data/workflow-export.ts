/**
 * What an export of one workflow holds: its record (as `describe` reports it), its whole timeline and the
 * writes of deposed engines that storage refused — read fresh from the engine at the moment of export, so
 * the file is complete even when the screen shows a window of a long timeline. Reading it is a mutation
 * (an action the person takes), not a cached query.
 */
import { useMutation } from '@tanstack/react-query';
import type { FenceRejection, TimelineEntry, WorkflowDescription } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';

export type WorkflowExport = {
  format: 'shuttle.workflow-export';
  version: 1;
  exportedAt: string;
  workflow: WorkflowDescription;
  timeline: TimelineEntry[];
  fenceRejections: FenceRejection[];
};

/** Reads what the export contains. */
export async function collectExport(
  client: Pick<ShuttleClient, 'describe' | 'timeline' | 'fenceRejections'>,
  workflowId: string,
  now: Date = new Date(),
): Promise<WorkflowExport> {
  const [workflow, timeline, fenceRejections] = await Promise.all([
    client.describe(workflowId),
    client.timeline(workflowId),
    client.fenceRejections(workflowId),
  ]);
  return {
    format: 'shuttle.workflow-export',
    version: 1,
    exportedAt: now.toISOString(),
    workflow,
    timeline,
    fenceRejections,
  };
}

/** Collects the export of `workflowId`; resolves with it. */
export function useCollectExport(workflowId: string) {
  const client = useShuttleClient();
  return useMutation({ mutationFn: () => collectExport(client, workflowId) });
}
