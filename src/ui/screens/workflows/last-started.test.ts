import { describe, expect, it } from 'vitest';
import { showsStartedNotice, startedNoticeMs } from './last-started';

describe('the start confirmation on the Workflows list', () => {
  it('shows for a short while after the start, then goes', () => {
    const notice = { workflowId: 'w', workflowType: 'approval', at: 1_000 };
    expect(showsStartedNotice(notice, 1_000)).toBe(true);
    expect(showsStartedNotice(notice, 1_000 + startedNoticeMs - 1)).toBe(true);
    expect(showsStartedNotice(notice, 1_000 + startedNoticeMs)).toBe(false);
    expect(showsStartedNotice(notice, 1_000 + 20 * 60_000)).toBe(false);
    expect(showsStartedNotice(null, 1_000)).toBe(false);
  });
});
