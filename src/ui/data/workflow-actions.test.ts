import { describe, expect, it } from 'vitest';
import { maxIdLength } from '../../public/browser';
import { bulkTargets, forkId, rerunId } from './workflow-actions';

describe('rerunId', () => {
  it('names the workflow it reruns, numbered', () => {
    expect(rerunId('order-7', 1)).toBe('order-7-rerun-1');
    expect(rerunId('order-7', 12)).toBe('order-7-rerun-12');
  });

  it('cuts a long original id so the rerun id stays within the limit, its number kept', () => {
    const long = 'x'.repeat(maxIdLength);
    expect(rerunId(long, 3)).toHaveLength(maxIdLength);
    expect(rerunId(long, 3).endsWith('-rerun-3')).toBe(true);
  });
});

describe('bulkTargets', () => {
  it('cancel asks running and pending work; terminate ends anything unfinished; nothing finished is a target', () => {
    expect(bulkTargets('cancel', 'running')).toBe(true);
    expect(bulkTargets('cancel', 'suspended')).toBe(false);
    expect(bulkTargets('terminate', 'suspended')).toBe(true);
    expect(bulkTargets('terminate', 'completed')).toBe(false);
  });

  it('retry takes what ended badly: failed, cancelled, terminated, timed out — never a completed or live one', () => {
    for (const status of ['failed', 'cancelled', 'terminated', 'timed-out'] as const)
      expect(bulkTargets('retry', status)).toBe(true);
    for (const status of ['completed', 'running', 'pending', 'suspended'] as const)
      expect(bulkTargets('retry', status)).toBe(false);
  });

  it('a fork into another id names the workflow it forks, within the id limit', () => {
    expect(forkId('order-7', 2)).toBe('order-7-fork-2');
    expect(forkId('x'.repeat(maxIdLength), 1)).toHaveLength(maxIdLength);
  });
});
