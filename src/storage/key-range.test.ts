import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prefixSuccessor, scanRange } from './key-range';

/** Short strings over an alphabet chosen to hit the edges: U+FFFF, U+0000, a surrogate, and neighbours. */
const edgyStrings = fc
  .array(fc.constantFrom('a', 'b', ':', ';', '\u0000', '\uffff', '\ufffe', '\ud83d', '\ude00'), {
    maxLength: 5,
  })
  .map((units) => units.join(''));

describe('key ranges', () => {
  it('covers exactly the keys that start with the prefix', () => {
    fc.assert(
      fc.property(edgyStrings, edgyStrings, (prefix, key) => {
        const successor = prefixSuccessor(prefix);
        const inRange = key >= prefix && (successor === undefined || key < successor);
        expect(inRange).toBe(key.startsWith(prefix));
      }),
      { numRuns: 2000 },
    );
  });

  it('has no upper bound for the empty prefix or a prefix of U+FFFF only', () => {
    expect(prefixSuccessor('')).toBeUndefined();
    expect(prefixSuccessor('\uffff\uffff')).toBeUndefined();
    expect(prefixSuccessor('a\uffff')).toBe('b');
    expect(prefixSuccessor('wf:')).toBe('wf;');
  });

  it('narrows the range by after, in the scan direction, and reports empty ranges', () => {
    expect(scanRange('p:', 'p:3', false)).toEqual({ lower: 'p:3', lowerOpen: true, upper: 'p;' });
    expect(scanRange('p:', 'p:3', true)).toEqual({ lower: 'p:', lowerOpen: false, upper: 'p:3' });
    expect(scanRange('p:', 'a', false)).toEqual({ lower: 'p:', lowerOpen: false, upper: 'p;' });
    expect(scanRange('p:', 'z', false)).toBeUndefined();
    expect(scanRange('p:', 'a', true)).toBeUndefined();
    expect(scanRange('p:', 'p:', true)).toBeUndefined();
  });
});
