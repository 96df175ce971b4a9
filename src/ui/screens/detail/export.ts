/**
 * Export of one workflow as a JSON file: its record (as `describe` reports it), its whole timeline and the
 * writes of deposed engines that storage refused — read fresh from the engine at the moment of export, so
 * the file is complete even when the screen shows a window of a long timeline.
 */
import type { FenceRejection, TimelineEntry, WorkflowDescription } from '../../../engine';
import type { ShuttleClient } from '../../../worker/client';

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

/** A file name for the export: the id with anything unsafe replaced. */
export function exportFileName(workflowId: string): string {
  return `workflow-${workflowId.replace(/[^a-zA-Z0-9._-]+/g, '_').slice(0, 120)}.json`;
}

/** Downloads the workflow's export. */
export async function exportWorkflow(client: ShuttleClient, workflowId: string): Promise<void> {
  const data = await collectExport(client, workflowId);
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = exportFileName(workflowId);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
