import { describe, expect, it } from 'vitest';
import type { WorkflowSummary } from '../../public';
import { hasClientFilters, nestRows, rowMatcher } from './list-filters';

const row = (workflowId: string, extra: Partial<WorkflowSummary> = {}): WorkflowSummary => ({
  workflowId,
  workflowType: 'order',
  version: 1,
  run: 1,
  status: 'running',
  createdAt: 1_000,
  updatedAt: 1_000,
  owner: null,
  epoch: 1,
  waitingOn: null,
  ...extra,
});

const none = { owner: null, text: '', since: null } as const;

describe('the list’s own filters', () => {
  it('finds text in the id, type, what it waits on and the error, whatever the case', () => {
    const rows = [
      row('order-1', { waitingOn: "signal 'approve'" }),
      row('order-2', { status: 'failed', error: 'ActivityFailedError: Payment declined' }),
      row('ship-3', { workflowType: 'shipment' }),
    ];
    const find = (text: string) => rows.filter(rowMatcher({ ...none, text }, 0)).map((r) => r.workflowId);
    expect(find('payment DECLINED')).toEqual(['order-2']);
    expect(find('approve')).toEqual(['order-1']);
    expect(find('shipment')).toEqual(['ship-3']);
    expect(find('der-')).toEqual(['order-1', 'order-2']);
    expect(find('  ')).toEqual(['order-1', 'order-2', 'ship-3']);
  });

  it('keeps what started within the time range, and what nobody owns', () => {
    const now = 10 * 60 * 60_000;
    const rows = [
      row('recent', { startedAt: now - 5 * 60_000 }),
      row('older', { createdAt: now - 2 * 60 * 60_000 }),
      row('owned', { startedAt: now, owner: { engineId: 'e', epoch: 1, claimedAt: 0, expiresAt: 1 } }),
    ];
    expect(rows.filter(rowMatcher({ ...none, since: '15m' }, now)).map((r) => r.workflowId)).toEqual([
      'recent',
      'owned',
    ]);
    expect(
      rows.filter(rowMatcher({ ...none, since: '24h', owner: 'none' }, now)).map((r) => r.workflowId),
    ).toEqual(['recent', 'older']);
    expect(hasClientFilters(none)).toBe(false);
    expect(hasClientFilters({ ...none, since: '1h' })).toBe(true);
  });
});

describe('the tree view', () => {
  it('lists children under their parents, deeper, and keeps the order otherwise', () => {
    const rows = [
      row('child-b', { parentId: 'parent' }),
      row('other'),
      row('grandchild', { parentId: 'child-a' }),
      row('parent'),
      row('child-a', { parentId: 'parent' }),
      row('orphan', { parentId: 'purged-parent' }),
    ];
    expect(nestRows(rows).map(({ row, depth }) => `${'  '.repeat(depth)}${row.workflowId}`)).toEqual([
      'other',
      'parent',
      '  child-b',
      '  child-a',
      '    grandchild',
      'orphan',
    ]);
  });
});
