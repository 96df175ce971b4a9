import { describe, expect, it } from 'vitest';
import type { FenceRejection, RecordedHistory, TimelineEntry, WorkflowDescription } from '../../public';
import { collectExport } from './workflow-export';

describe('workflow export', () => {
  it('holds the record, the whole timeline, the recorded history and the refused writes of one workflow, read at once', async () => {
    const asked: string[] = [];
    const client = {
      describe: async (id: string) => (
        asked.push(`describe ${id}`),
        { workflowId: id } as WorkflowDescription
      ),
      timeline: async (id: string, options?: object) => (
        asked.push(`timeline ${id} ${JSON.stringify(options ?? {})}`),
        [{ seq: 1 } as TimelineEntry]
      ),
      history: async (id: string) => (
        asked.push(`history ${id}`),
        { workflowId: id, entries: [] } as unknown as RecordedHistory
      ),
      fenceRejections: async (id?: string) => (asked.push(`rejections ${id}`), [] as FenceRejection[]),
    };
    const data = await collectExport(client, 'w1', new Date(Date.UTC(2025, 0, 2)));
    expect(asked.sort()).toEqual(['describe w1', 'history w1', 'rejections w1', 'timeline w1 {}']);
    expect(data).toEqual({
      format: 'shuttle.workflow-export',
      version: 1,
      exportedAt: '2025-01-02T00:00:00.000Z',
      workflow: { workflowId: 'w1' },
      timeline: [{ seq: 1 }],
      history: { workflowId: 'w1', entries: [] },
      fenceRejections: [],
    });
  });
});
