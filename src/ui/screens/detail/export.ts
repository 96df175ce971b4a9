/**
 * Export of one workflow as a JSON file: the browser side — a safe file name and the download. What the file
 * holds is read by the data layer (data/workflow-export.ts).
 */
import type { WorkflowExport } from '../../data/workflow-export';

/** A file name for the export: the id with anything unsafe replaced. */
export function exportFileName(workflowId: string): string {
  return `workflow-${workflowId.replace(/[^a-zA-Z0-9._-]+/g, '_').slice(0, 120)}.json`;
}

/** Downloads `data` as a JSON file. */
export function downloadExport(data: WorkflowExport): void {
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = exportFileName(data.workflow.workflowId);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
