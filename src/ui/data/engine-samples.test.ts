import { describe, expect, it } from 'vitest';
import type { EngineRecord } from '../../public/browser';
import { appendSample, engineSamples, recordEngineSample, sampleWindowMs } from './engine-samples';

function engine(engineId: string, claimsHeld: number, status = 'running'): EngineRecord {
  return { engineId, claimsHeld, status, alive: true } as EngineRecord;
}

describe('engine samples', () => {
  it('counts the claims of live engines only, at most once a second, over the last ten minutes', () => {
    let list = appendSample([], [engine('a', 3), engine('b', 1, 'crashed')], 0);
    expect(list).toEqual([{ at: 0, claims: { a: 3 } }]);
    expect(appendSample(list, [engine('a', 4)], 999)).toBe(list);
    list = appendSample(list, [engine('a', 4)], 1_000);
    list = appendSample(list, [engine('a', 5)], sampleWindowMs + 500);
    expect(list.map((sample) => sample.at)).toEqual([1_000, sampleWindowMs + 500]);
  });

  it('keeps what the engines query answers in the store the chart reads', () => {
    const before = engineSamples();
    recordEngineSample([engine('a', 2)], 50_000);
    recordEngineSample([engine('a', 7)], 50_200);
    expect(engineSamples()).not.toBe(before);
    expect(engineSamples().at(-1)).toEqual({ at: 50_000, claims: { a: 2 } });
  });
});
