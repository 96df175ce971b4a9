import { describe, expect, it } from 'vitest';
import { purgeBlockedReason, unfinishedStatusesOf, workflowCount } from './purge-filter';

describe('purge by filter', () => {
  it('is possible without a status, or with finished statuses only', () => {
    expect(purgeBlockedReason({})).toBeNull();
    expect(purgeBlockedReason({ status: 'completed' })).toBeNull();
    expect(purgeBlockedReason({ status: ['failed', 'timed-out', 'terminated'] })).toBeNull();
  });

  it('is refused, saying why, when the status names unfinished ones', () => {
    expect(unfinishedStatusesOf({ status: ['completed', 'running', 'pending'] })).toEqual([
      'running',
      'pending',
    ]);
    expect(purgeBlockedReason({ status: 'running' })).toBe(
      'Only finished workflows can be purged; the filter names running.',
    );
    expect(purgeBlockedReason({ status: ['suspended', 'completed'] })).toMatch(/names suspended\.$/);
  });

  it('is refused while the list’s own text search or time range applies (the engine purges by its filter)', () => {
    expect(purgeBlockedReason({}, { text: 'x', since: null })).toMatch(/clear the text search/);
    expect(purgeBlockedReason({}, { text: '', since: '24h' })).toMatch(/time range/);
    expect(purgeBlockedReason({}, { text: ' ', since: null })).toBeNull();
  });

  it('counts in words', () => {
    expect(workflowCount(1)).toBe('1 workflow');
    expect(workflowCount(1200)).toBe('1,200 workflows');
  });
});
