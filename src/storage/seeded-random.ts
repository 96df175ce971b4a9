/**
 * The one seeded random source of the project: fault injection, the ownership simulation, the cluster fault
 * schedule, the soaks and the tests draw from it, so the same seed replays the same run.
 */

/** mulberry32: a small, fast, well-distributed 32-bit PRNG; returns numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
