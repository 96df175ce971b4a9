import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Bytes } from './utf8';

/** Any UTF-16 string, lone surrogates included. */
const codeUnitStrings = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
  .map((units) => String.fromCharCode(...units));

describe('utf8Bytes', () => {
  it('counts UTF-8 bytes exactly as TextEncoder encodes them', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), codeUnitStrings), (text) => {
        expect(utf8Bytes(text)).toBe(encoder.encode(text).length);
      }),
      { numRuns: 500 },
    );
  });

  it('counts 1 to 4 bytes a character, and a lone surrogate as its 3-byte replacement', () => {
    expect(utf8Bytes('')).toBe(0);
    expect(utf8Bytes('abc')).toBe(3);
    expect(utf8Bytes('é')).toBe(2);
    expect(utf8Bytes('€')).toBe(3);
    expect(utf8Bytes('😀')).toBe(4);
    expect(utf8Bytes('\ud83d')).toBe(3);
    expect(utf8Bytes('\ude00x')).toBe(4);
  });
});
