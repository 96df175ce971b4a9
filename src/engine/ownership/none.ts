/**
 * `ownership: 'none'`: one engine per store. Nothing is claimed and no write carries a fence beyond its own
 * conditions (every workflow write is a compare-and-swap on the workflow's checkpoint). The engine drives every
 * running workflow it has a definition for; recovery and the reclaim pass are the same scan of the running
 * workflows (`StoreWideOwnership`, common.ts). Two engines on one store are not supported in this mode.
 */
import { noFence, StoreWideOwnership } from './common';
import type { Fence, ReleaseReport, WriteOutcome } from './ownership';

export class NoOwnership extends StoreWideOwnership {
  readonly mode = 'none' as const;
  readonly sharesStore = false;

  async checkGates(): Promise<void> {}

  async open(): Promise<void> {}

  fence(): Fence | WriteOutcome {
    return noFence;
  }

  async classifyRefusal(): Promise<WriteOutcome> {
    return { ok: false, reason: 'lost-race' };
  }

  drives(): boolean {
    return true;
  }

  async renew(): Promise<void> {}

  async release(): Promise<ReleaseReport> {
    return { claimsReleased: 0, leaseReleased: false };
  }
}
