import { describe, expect, it } from 'vitest';
import { seededRandom } from './seeded-random';

describe('seededRandom', () => {
  it('gives the same sequence for the same seed, in [0, 1), and another for another seed', () => {
    const draw = (seed: number) => {
      const next = seededRandom(seed);
      return Array.from({ length: 1_000 }, () => next());
    };
    const first = draw(42);
    expect(draw(42)).toEqual(first);
    expect(first.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(draw(43)).not.toEqual(first);
  });

  it('keeps the mulberry32 sequence recorded seeds replay with', () => {
    const next = seededRandom(1);
    expect([next(), next(), next()].map((value) => Math.round(value * 1e9))).toEqual([
      627073941, 2735721, 527447040,
    ]);
  });
});
