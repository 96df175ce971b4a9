import { describe, expect, it } from 'vitest';
import type { ClaimInfo } from '../../../public';
import { sortClaimRows, toClaimRows } from './claim-rows';

function claim(workflowId: string, epoch: number, claimedAt: number, expiresAt: number): ClaimInfo {
  return { workflowId, epoch, holderCorrupt: false, holder: { engineId: 'A', epoch, claimedAt, expiresAt } };
}

describe('claim rows', () => {
  it('computes expiry, renew age and the contested and expired flags', () => {
    const [fresh, contested, expired] = toClaimRows(
      [claim('a', 1, 9_000, 15_500), claim('b', 2, 8_000, 16_000), claim('c', 3, -100_000, 9_000)],
      10_000,
      6_000,
    );
    expect(fresh).toMatchObject({ expiresInMs: 5_500, renewAgeMs: 500, contested: false, expired: false });
    expect(contested).toMatchObject({ contested: true, expired: false });
    expect(expired).toMatchObject({ expiresInMs: -1_000, expired: true, contested: false });
  });

  it('puts expired claims first, then contested ones, then the soonest to expire', () => {
    const rows = toClaimRows(
      [
        claim('a', 1, 9_000, 15_000),
        claim('b', 2, 9_000, 16_000),
        claim('c', 1, 0, 9_000),
        claim('d', 1, 9_000, 12_000),
      ],
      10_000,
      6_000,
    );
    expect(sortClaimRows(rows).map((row) => row.workflowId)).toEqual(['c', 'b', 'd', 'a']);
  });
});
