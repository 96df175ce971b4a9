import { describe, expect, it } from 'vitest';
import { maxIdLength } from '../../public/browser';
import { bulkTargets, forkId, replayCheckWords, rerunId } from './workflow-actions';

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

describe('replayCheckWords', () => {
  const who = { workflowId: 'w', run: 2, workflowType: 'ticket', version: 1 };
  it('says a clean replay, a divergence with its position and both operations, and a missing definition', () => {
    expect(replayCheckWords({ ...who, ok: true, operations: 1 })).toEqual({
      ok: true,
      title: 'Replays clean',
      detail: 'Run 2 replays against ticket version 1 as registered now: 1 operation, the same as recorded.',
    });
    const diverged = replayCheckWords({
      ...who,
      ok: false,
      problem: 'diverged',
      position: 3,
      recorded: "signal 'close'",
      replayed: 'sleep',
      error: { name: 'NonDeterminismError', message: '…' },
    });
    expect(diverged.title).toBe('Diverges at #3');
    expect(diverged.detail).toContain(
      "The history recorded signal 'close'; the code registered now yields sleep.",
    );
    expect(
      replayCheckWords({
        ...who,
        ok: false,
        problem: 'no-definition',
        error: { name: 'WorkflowNotRegisteredError', message: 'No definition of ticket' },
      }),
    ).toEqual({ ok: false, title: 'Cannot replay here', detail: 'No definition of ticket' });
  });
});
