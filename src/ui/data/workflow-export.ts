/**
 * What an export of one workflow holds: its record (as `describe` reports it), its whole timeline, its
 * recorded history (what `shuttle replay --file` checks code against) and the writes of deposed engines that
 * storage refused — read fresh from the engine at the moment of export, so
 * the file is complete even when the screen shows a window of a long timeline. Reading it is a mutation
 * (an action the person takes), not a cached query.
 */
import { useMutation } from '@tanstack/react-query';
import type { FenceRejection, RecordedHistory, TimelineEntry, WorkflowDescription } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';

export type WorkflowExport = {
  format: 'shuttle.workflow-export';
  version: 1;
  exportedAt: string;
  workflow: WorkflowDescription;
  timeline: TimelineEntry[];
  /** The latest run's history, for replay testing (`shuttle replay --file this.json`). */
  history: RecordedHistory;
  fenceRejections: FenceRejection[];
};

/** Reads what the export contains. */
export async function collectExport(
  client: Pick<ShuttleClient, 'describe' | 'timeline' | 'history' | 'fenceRejections'>,
  workflowId: string,
  now: Date = new Date(),
): Promise<WorkflowExport> {
  const [workflow, timeline, history, fenceRejections] = await Promise.all([
    client.describe(workflowId),
    client.timeline(workflowId),
    client.history(workflowId),
    client.fenceRejections(workflowId),
  ]);
  return {
    format: 'shuttle.workflow-export',
    version: 1,
    exportedAt: now.toISOString(),
    workflow,
    timeline,
    history,
    fenceRejections,
  };
}

/** Collects the export of `workflowId`; resolves with it. */
export function useCollectExport(workflowId: string) {
  const client = useShuttleClient();
  return useMutation({ mutationFn: () => collectExport(client, workflowId) });
}
