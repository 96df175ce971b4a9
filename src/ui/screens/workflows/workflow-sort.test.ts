import { describe, expect, it } from 'vitest';
import { workflowStatuses } from '../../../public/browser';
import type { WorkflowSummary } from '../../../public';
import { sortWorkflows } from './workflow-sort';

function row(workflowId: string, status: WorkflowSummary['status'], createdAt = 0): WorkflowSummary {
  return {
    workflowId,
    workflowType: 'order',
    version: 1,
    run: 1,
    status,
    createdAt,
    updatedAt: createdAt,
    owner: null,
    epoch: null,
    waitingOn: null,
  };
}

describe('sortWorkflows', () => {
  it('sorts by status with live work first, every status of the vocabulary in its own place', () => {
    const rows = workflowStatuses.map((status) => row(status, status));
    expect(sortWorkflows(rows, 'status', 'asc').map((item) => item.status)).toEqual([
      'running',
      'pending',
      'suspended',
      'failed',
      'timed-out',
      'terminated',
      'cancelled',
      'completed',
      'continued-as-new',
    ]);
    expect(sortWorkflows(rows, 'status', 'desc')[0]!.status).toBe('continued-as-new');
  });

  it('breaks ties by newest first, then id', () => {
    const rows = [row('b', 'running', 1), row('a', 'running', 1), row('c', 'running', 2)];
    expect(sortWorkflows(rows, 'status', 'asc').map((item) => item.workflowId)).toEqual(['c', 'a', 'b']);
  });
});
