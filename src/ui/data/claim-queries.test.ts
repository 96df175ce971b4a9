import { describe, expect, it } from 'vitest';
import type { ClaimHolder } from '../../public';
import { claimLiveness, describeReclaim, livenessLabel, mayTakeOver } from './claim-queries';

const holder = (live: boolean, expiresAt = 10_000): ClaimHolder => ({
  engineId: 'engine-a',
  epoch: 3,
  claimedAt: 1_000,
  expiresAt,
  live,
});

describe('claimLiveness', () => {
  it('follows the engine’s verdict: a live holder cannot be taken over, in its grace period or not', () => {
    expect(claimLiveness(holder(true), 9_000, 2_000)).toMatchObject({ state: 'live', inGrace: false });
    const grace = claimLiveness(holder(true), 11_000, 2_000);
    expect(grace).toMatchObject({ state: 'live', inGrace: true });
    expect(livenessLabel(grace)).toBe('live · in grace');
    expect(mayTakeOver(grace)).toBe(false);
    // Even an engine record that says dead does not overrule the engine's "live".
    expect(mayTakeOver(claimLiveness(holder(true), 9_000, 2_000, 'dead'))).toBe(false);
  });

  it('calls a holder not live past its expiry and grace expired, and one not live before that dead', () => {
    const expired = claimLiveness(holder(false), 12_001, 2_000);
    expect(expired.state).toBe('expired');
    expect(mayTakeOver(expired)).toBe(true);
    const dead = claimLiveness(holder(false), 5_000, 2_000);
    expect([dead.state, livenessLabel(dead), mayTakeOver(dead)]).toEqual(['dead', 'holder dead', true]);
    // Its engine record says why, whatever the time.
    expect(claimLiveness(holder(false), 60_000, 2_000, 'crashed').state).toBe('dead');
  });

  it('offers nothing when nobody holds it', () => {
    const none = claimLiveness(null, 0, 2_000);
    expect([none.state, livenessLabel(none), mayTakeOver(none)]).toEqual(['none', 'no holder', false]);
  });
});

describe('describeReclaim', () => {
  const name = (engineId: string) => (engineId === 'engine-a' ? 'Tab A' : engineId);

  it('says a takeover succeeded with its epoch, and a refusal with who holds it', () => {
    expect(describeReclaim({ outcome: 'taken-over', epoch: 4 }, name)).toEqual({
      ok: true,
      text: 'Taken over by this engine at epoch 4.',
    });
    const refused = describeReclaim({ outcome: 'held-live', holder: holder(true) }, name);
    expect(refused.ok).toBe(false);
    expect(refused.text).toMatch(/^Refused: its holder Tab A is live \(epoch 3\)/);
    for (const outcome of ['not-running', 'ineligible', 'lost-race', 'corrupt'] as const)
      expect(describeReclaim({ outcome }, name).ok).toBe(false);
  });
});
