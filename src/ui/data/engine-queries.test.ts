import { describe, expect, it } from 'vitest';
import type { EngineRecord } from '../../public/browser';
import { claimsOfLiveEngines } from './engine-queries';

const engine = (engineId: string, claimsHeld: number, changes: Partial<EngineRecord> = {}) =>
  ({ engineId, claimsHeld, status: 'running', alive: true, ...changes }) as EngineRecord;

describe('claimsOfLiveEngines', () => {
  it('counts this tab’s engine by what it holds now, not by its presence record of a heartbeat ago', () => {
    // Right after this tab's workflow finished, its presence record still says 31.
    const engines = [engine('self', 31), engine('other', 4)];
    expect(claimsOfLiveEngines(engines, { engineId: 'self', owned: 30 })).toBe(34);
    expect(claimsOfLiveEngines(engines, null)).toBe(35);
  });

  it('leaves out engines that are not live, whatever their records last said', () => {
    const engines = [
      engine('self', 2),
      engine('closed', 5, { alive: false }),
      engine('stopped', 3, { status: 'stopped' }),
      engine('crashed', 1, { status: 'crashed' }),
    ];
    expect(claimsOfLiveEngines(engines, { engineId: 'self', owned: 2 })).toBe(2);
  });
});
