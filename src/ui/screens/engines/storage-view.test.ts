import { describe, expect, it } from 'vitest';
import { formatBytes, largestParts, quotaShare } from './storage-view';

describe('storage usage in words', () => {
  it('formats bytes in human units', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(23.4 * 1024 * 1024)).toBe('23.4 MB');
    expect(formatBytes(300 * 1024 ** 3)).toBe('300 GB');
    expect(formatBytes(Number.NaN)).toBe('—');
  });

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
