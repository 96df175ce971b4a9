import { describe, expect, it } from 'vitest';
import { describeLoss, whereNow } from './lost-notice';

const name = (id: string) => (id === 'b' ? 'Tab B' : id);

describe('the lost-workflow notice', () => {
  it('does not say another engine owns a workflow that completed', () => {
    const text = whereNow({ status: 'completed', owner: null, epoch: 2 }, name, 'a');
    expect(text).toBe('The workflow has since ended completed at epoch 2.');
    expect(text).not.toContain('owns it now');
  });

  it('names the new owner and its epoch', () => {
    expect(
      whereNow(
        { status: 'running', owner: { engineId: 'b', epoch: 2, claimedAt: 0, expiresAt: 0 }, epoch: 2 },
        name,
        'a',
      ),
    ).toBe('Tab B owns it now, at epoch 2.');
  });

  it('says when nobody owns it yet', () => {
    expect(whereNow({ status: 'running', owner: null, epoch: 2 }, name, 'a')).toMatch(/^No engine owns it/);
  });

  it('describes the refused writes', () => {
    expect(
      describeLoss(null, [
        { workflowId: 'w', engineId: 'a', heldEpoch: 1, currentEpoch: 2, at: 0, what: 'commit' },
      ]),
    ).toBe('Its write was refused by the epoch fence (it held epoch 1; the workflow is at 2).');
  });
});
