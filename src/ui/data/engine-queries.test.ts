import { describe, expect, it } from 'vitest';
import type { EngineDirectoryEntry, EngineRecord } from '../../public/browser';
import { claimsOfLiveEngines, isEngineLive, mergeEngineDirectory } from './engine-queries';

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

describe('mergeEngineDirectory', () => {
  const entry = (engineId: string, label: string, changes: Partial<EngineDirectoryEntry> = {}) =>
    ({
      engineId,
      label,
      shortLabel: label.slice(4),
      color: '#009E73',
      ordinal: 2,
      mode: 'engine',
      runtime: { kind: 'tab' },
      startedAt: 1,
      stoppedAt: 5,
      ...changes,
    }) as EngineDirectoryEntry;

  it('resolves live engines from presence and the others from the directory, never live', () => {
    const live = engine('a', 1, { label: 'Tab A', color: '#0072B2' });
    const merged = mergeEngineDirectory([live], [entry('a', 'Tab A (old)'), entry('c', 'Tab C')]);
    expect(merged.get('a')).toBe(live);
    const remembered = merged.get('c')!;
    expect(remembered).toMatchObject({ label: 'Tab C', shortLabel: 'C', color: '#009E73', ordinal: 2 });
    expect(remembered).toMatchObject({ status: 'stopped', alive: false, claimsHeld: 0, thisTab: false });
    expect(isEngineLive(remembered)).toBe(false);
    expect(mergeEngineDirectory([], [entry('d', 'Tab D', { stoppedAt: null })]).get('d')!.status).toBe(
      'dead',
    );
    expect(mergeEngineDirectory([], []).size).toBe(0);
  });
});
