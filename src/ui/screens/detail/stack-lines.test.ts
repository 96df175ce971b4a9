import { describe, expect, it } from 'vitest';
import { causeOf, detailsShown, stackLines, visibleLines } from './stack-lines';

const stack = [
  'Error: card declined',
  '    at charge (shop.ts:9:58)',
  '    at ActivityAttempt.run (https://studio.test/assets/engine.worker-Bx1.js:1:4021) [engine]',
  '    at helper (shop.ts:30:3)',
  '    at Generator.next (<anonymous>) [engine]',
].join('\n');

describe('stackLines', () => {
  it('hides the frames the engine marked as its own until they are shown, without the mark', () => {
    const parsed = stackLines(stack);
    expect(parsed.engineFrames).toBe(2);
    expect(visibleLines(parsed, false).map((line) => line.text)).toEqual([
      'Error: card declined',
      '    at charge (shop.ts:9:58)',
      '    at helper (shop.ts:30:3)',
    ]);
    const all = visibleLines(parsed, true);
    expect(all).toHaveLength(5);
    expect(all[2]).toEqual({
      text: '    at ActivityAttempt.run (https://studio.test/assets/engine.worker-Bx1.js:1:4021)',
      engine: true,
    });
  });

  it('keeps a stack without marks whole, and a message line that ends like a mark', () => {
    const plain = stackLines('Error: see [engine]\n    at a (a.ts:1:1)');
    expect(plain.engineFrames).toBe(0);
    expect(visibleLines(plain, false).map((line) => line.text)).toEqual([
      'Error: see [engine]',
      '    at a (a.ts:1:1)',
    ]);
  });
});

describe('causeOf', () => {
  it("finds an ActivityFailedError's failure, and leaves its stack out of the details shown", () => {
    const error = {
      name: 'ActivityFailedError',
      message: "Activity 'charge' failed after 1 attempt: Error: card declined",
      details: {
        activityName: 'charge',
        attempts: 1,
        failure: { name: 'Error', message: 'card declined', stack },
      },
    };
    expect(causeOf(error)?.stack).toBe(stack);
    expect(detailsShown(error)).toEqual({
      activityName: 'charge',
      attempts: 1,
      failure: { name: 'Error', message: 'card declined' },
    });
    expect(causeOf({ name: 'Error', message: 'x', details: { failure: 'text' } })).toBeNull();
  });
});
