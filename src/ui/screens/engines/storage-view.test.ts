import { describe, expect, it } from 'vitest';
import { largestParts, quotaShare } from './storage-view';

describe('storage usage in words', () => {
  it('gives the share of the quota when there is one', () => {
    expect(quotaShare({ bytes: 10, quotaBytes: undefined })).toBeNull();
    expect(quotaShare({ bytes: 1, quotaBytes: 10_000 })).toBe('<0.1%');
    expect(quotaShare({ bytes: 250, quotaBytes: 1000 })).toBe('25%');
    expect(quotaShare({ bytes: 45, quotaBytes: 1000 })).toBe('4.5%');
  });

  it('lists the largest parts first, with their share', () => {
    expect(
      largestParts(
        {
          bytes: 1000,
          parts: [
            { name: 'timeline', bytes: 200 },
            { name: 'workflows', bytes: 600 },
            { name: 'kv', bytes: 100 },
          ],
        },
        2,
      ),
    ).toEqual([
      { name: 'workflows', bytes: 600, share: 0.6 },
      { name: 'timeline', bytes: 200, share: 0.2 },
    ]);
  });
});
