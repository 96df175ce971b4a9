import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../../../public';
import { departureFrom, describeDepartures } from './departures';

let seq = 0;
function entry<K extends TimelineEntry['kind']>(
  kind: K,
  engineId: string,
  epoch: number,
  detail: Extract<TimelineEntry, { kind: K }>['detail'],
): TimelineEntry {
  return { seq: ++seq, at: seq, engineId, epoch, kind, detail } as TimelineEntry;
}

describe('departureFrom', () => {
  it('names the takeover reason when another engine took the workflow from the engine', () => {
    const timeline = [
      entry('claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry('claim-taken-over', 'B', 2, {
        fromEngineId: 'A',
        fromEpoch: 1,
        toEngineId: 'B',
        toEpoch: 2,
        reason: 'holder-stopped',
      }),
    ];
    expect(departureFrom(timeline, 'A')).toBe('holder-stopped');
    expect(departureFrom(timeline, 'B')).toBeNull();
  });

  it('says released when the engine released the claim and another acquired it, and expired when it lapsed', () => {
    const released = [
      entry('claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry('claim-released', 'A', 1, { engineId: 'A', epoch: 1 }),
      entry('claim-acquired', 'B', 2, { engineId: 'B', epoch: 2, how: 'acquire' }),
    ];
    expect(departureFrom(released, 'A')).toBe('released');
    const lapsed = [
      entry('claim-acquired', 'A', 1, { engineId: 'A', epoch: 1, how: 'start' }),
      entry('claim-taken-over', 'B', 2, {
        fromEngineId: 'A',
        fromEpoch: 1,
        toEngineId: 'B',
        toEpoch: 2,
        reason: 'expired',
      }),
    ];
    expect(departureFrom(lapsed, 'A')).toBe('expired');
    // Released, then acquired again by the same engine: it has not left.
    expect(
      departureFrom(
        [
          ...released.slice(0, 2),
          entry('claim-acquired', 'A', 2, { engineId: 'A', epoch: 2, how: 'acquire' }),
        ],
        'A',
      ),
    ).toBeNull();
  });

  it('counts departures by kind', () => {
    expect(describeDepartures(['released', 'holder-stopped', 'released', null])).toBe(
      '1 holder-stopped, 1 not moved, 2 released',
    );
  });
});
