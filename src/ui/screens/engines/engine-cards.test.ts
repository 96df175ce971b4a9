import { describe, expect, it } from 'vitest';
import type { ClaimInfo } from '../../../public';
import { canRestart, claimsHeldBy, tabStateOf } from './engine-cards';

const claim = (workflowId: string, engineId: string | null): ClaimInfo => ({
  workflowId,
  holder: engineId ? { engineId, epoch: 1, claimedAt: 0, expiresAt: 1 } : null,
  holderCorrupt: false,
  epoch: 1,
});

describe('claimsHeldBy', () => {
  it('counts from the claims table, not from the presence record', () => {
    const dead = { engineId: 'a', claimsHeld: 1, alive: false, status: 'dead' as const };
    expect(claimsHeldBy(dead, [])).toBe(0);
    expect(claimsHeldBy(dead, [claim('w1', 'b'), claim('w2', null)])).toBe(0);
    const live = { engineId: 'b', claimsHeld: 0, alive: true, status: 'running' as const };
    expect(claimsHeldBy(live, [claim('w1', 'b'), claim('w2', 'b'), claim('w3', 'a')])).toBe(2);
  });

  it('falls back to the presence record only for a live engine while the claims load', () => {
    expect(claimsHeldBy({ engineId: 'a', claimsHeld: 3, alive: true, status: 'running' }, undefined)).toBe(3);
    expect(claimsHeldBy({ engineId: 'a', claimsHeld: 3, alive: false, status: 'dead' }, undefined)).toBe(0);
  });
});

describe('canRestart', () => {
  it('is not offered on a dead engine (its tab is gone) nor on server processes', () => {
    expect(canRestart({ status: 'dead', mode: 'engine', runtime: { kind: 'tab' } })).toBe(false);
    expect(canRestart({ status: 'crashed', mode: 'engine', runtime: { kind: 'tab' } })).toBe(true);
    expect(canRestart({ status: 'running', mode: 'engine', runtime: { kind: 'tab' } })).toBe(true);
    expect(canRestart({ status: 'running', mode: 'viewer', runtime: { kind: 'tab' } })).toBe(false);
    expect(
      canRestart({ status: 'running', mode: 'engine', runtime: { kind: 'server', hostName: 'h', pid: 1 } }),
    ).toBe(false);
  });
});

describe('a closed tab', () => {
  const tab = { kind: 'tab' } as const;
  it('is not offered a restart, whatever its engine last recorded', () => {
    expect(canRestart({ status: 'stopped', mode: 'engine', runtime: tab, tabOpen: false })).toBe(false);
    expect(canRestart({ status: 'crashed', mode: 'engine', runtime: tab, tabOpen: false })).toBe(false);
    expect(canRestart({ status: 'stopped', mode: 'engine', runtime: tab, tabOpen: true })).toBe(true);
    expect(canRestart({ status: 'crashed', mode: 'engine', runtime: tab, tabOpen: true })).toBe(true);
    expect(canRestart({ status: 'stopped', mode: 'engine', runtime: tab, tabOpen: null })).toBe(true);
  });

  it('is told apart from an open one, and from a tab that runs a newer engine', () => {
    const old = { engineId: 'a1', label: 'Tab A', startedAt: 1, mode: 'engine' as const, runtime: tab };
    expect(tabStateOf({ ...old, tabOpen: true }, [])).toBe('open');
    expect(tabStateOf({ ...old, tabOpen: false }, [])).toBe('closed');
    const newer = { engineId: 'a2', label: 'Tab A', startedAt: 2, tabOpen: true };
    expect(tabStateOf({ ...old, tabOpen: false }, [newer])).toBe('replaced');
    expect(tabStateOf({ ...old, tabOpen: false }, [{ ...newer, tabOpen: false }])).toBe('closed');
    expect(tabStateOf({ ...old, tabOpen: null }, [newer])).toBe('unknown');
    expect(
      tabStateOf({ ...old, runtime: { kind: 'server', hostName: 'h', pid: 1 }, tabOpen: false }, []),
    ).toBe('unknown');
  });
});
