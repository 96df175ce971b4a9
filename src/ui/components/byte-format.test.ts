import { describe, expect, it } from 'vitest';
import { formatBytes } from './byte-format';

describe('sizes in words', () => {
  it('formats bytes in human units', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(23.4 * 1024 * 1024)).toBe('23.4 MB');
    expect(formatBytes(300 * 1024 ** 3)).toBe('300 GB');
    expect(formatBytes(Number.NaN)).toBe('—');
  });
});
