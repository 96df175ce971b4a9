import { describe, expect, it } from 'vitest';
import { bulkTargets } from '../../data/workflow-actions';
import { signalNote } from './signal-note';

describe('signalNote', () => {
  it('says nothing for a signal the workflow waits for', () => {
    expect(signalNote('approve', ['approve'])).toBeNull();
    expect(signalNote(' ', [])).toBeNull();
  });
  it('warns that a signal it does not wait for stays buffered', () => {
    expect(signalNote('aprove', ['approve'])).toContain("It waits for 'approve' now, not 'aprove'");
    expect(signalNote('ping', [])).toContain('It waits for no signal right now');
  });
});

describe('bulkTargets', () => {
  it('cancels running work, terminates anything unfinished, touches nothing finished', () => {
    expect(bulkTargets('cancel', 'running')).toBe(true);
    expect(bulkTargets('cancel', 'suspended')).toBe(false);
    expect(bulkTargets('terminate', 'suspended')).toBe(true);
    expect(bulkTargets('terminate', 'completed')).toBe(false);
    expect(bulkTargets('cancel', 'failed')).toBe(false);
  });
});
