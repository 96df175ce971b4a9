import { describe, expect, it } from 'vitest';
import { isStorageError } from './errors';
import { storageLimits } from './types';
import { describeKey, validateBatch, validateCommitGroups, validateConditionalBatch } from './validation';

const limits = { maxValueBytes: 100 };

function thrown(call: () => void) {
  try {
    call();
  } catch (error) {
    if (isStorageError(error)) return error;
    throw error;
  }
  throw new Error('expected a StorageError');
}

describe('validation', () => {
  it('names the operation, the offending key (shortened) and the limit', () => {
    const key = 'k'.repeat(2000);
    const error = thrown(() => validateBatch('batch', [{ type: 'put', key, value: 'v' }], limits));
    expect(error.code).toBe('invalid-input');
    expect(error.operation).toBe('batch');
    expect(error.message).toContain('operation 0');
    expect(error.message).toContain(String(storageLimits.maxKeyBytes));
    expect(error.message).toContain(describeKey(key));
    expect(error.message.length).toBeLessThan(400);
    expect(error.message).toMatch(/Nothing was written/);
  });

  it('applies the value limit the adapter was configured with, in UTF-8 bytes', () => {
    expect(() =>
      validateBatch('batch', [{ type: 'put', key: 'k', value: 'x'.repeat(100) }], limits),
    ).not.toThrow();
    const error = thrown(() =>
      validateBatch('batch', [{ type: 'put', key: 'k', value: 'é'.repeat(51) }], limits),
    );
    expect(error.message).toContain('102 UTF-8 bytes');
    expect(error.message).toContain('limit of 100 bytes');
  });

  it('checks conditions before operations and names the failing one', () => {
    const error = thrown(() =>
      validateConditionalBatch(
        'conditionalBatch',
        [
          { key: 'a', expected: null },
          { key: 'b', expected: 3 },
        ],
        [],
        limits,
      ),
    );
    expect(error.message).toContain('condition 1');
    expect(error.message).toContain('"b"');
  });

  it('applies the count limits to each commit group separately and names the group', () => {
    const group = (size: number) => ({
      conditions: [],
      operations: Array.from({ length: size }, (_, index) => ({ type: 'delete', key: `k${index}` }) as const),
    });
    expect(() => validateCommitGroups('commitGroups', [group(1000), group(1000)], limits)).not.toThrow();
    const error = thrown(() => validateCommitGroups('commitGroups', [group(1), group(1001)], limits));
    expect(error.message).toContain('group 1');
    expect(error.message).toContain('1000');
  });
});
