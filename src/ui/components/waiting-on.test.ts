import { describe, expect, it } from 'vitest';
import { waitingOnText } from './waiting-on';

describe('waitingOnText', () => {
  it('spells out a waitUntil condition, alone or inside all / race', () => {
    expect(waitingOnText('until')).toBe('waitUntil condition');
    expect(waitingOnText("until 'approved'")).toBe("waitUntil condition 'approved'");
    expect(waitingOnText("all of 2 (until, signal 'ok')")).toBe(
      "all of 2 (waitUntil condition, signal 'ok')",
    );
    expect(waitingOnText('race of 2 (sleep, until)')).toBe('race of 2 (sleep, waitUntil condition)');
  });

  it('leaves every other summary as the engine wrote it', () => {
    expect(waitingOnText('sleep')).toBe('sleep');
    expect(waitingOnText("signal 'until'")).toBe("signal 'until'");
    expect(waitingOnText("activity 'charge' (attempt 2, backing off)")).toBe(
      "activity 'charge' (attempt 2, backing off)",
    );
  });
});
