/**
 * `ownership: 'none'`: one engine per store. Nothing is claimed and no write carries a fence beyond its own
 * conditions (every workflow write is a compare-and-swap on the workflow's checkpoint). The engine drives every
 * running workflow it has a definition for; recovery and the reclaim pass are the same scan of the running
 * workflows. Two engines on one store are not supported in this mode.
 */
import type { Operation } from '../../storage/types';
import { keys, workflowIdOf } from '../keys';
import { InvalidOptionsError } from '../errors';
import type {
  ClaimHolder,
  Fence,
  Ownership,
  OwnershipDeps,
  ReclaimOutcome,
  ReleaseReport,
  WorkflowChange,
  WriteOutcome,
} from './ownership';

const noFence: Fence = { conditions: [], heldEpoch: 0 };

/** Drives every running workflow this engine can run (none and lease: one engine runs them all). */
export async function driveEveryRunning(deps: OwnershipDeps): Promise<void> {
  const prefix = keys.statusIndexPrefix('running');
  let after: string | undefined;
  for (;;) {
    const page = await deps.storage.scan(prefix, { ...(after ? { after } : {}), limit: 500 });
    for (const { key, value } of page) {
      const workflowId = workflowIdOf(key, prefix);
      if (!workflowId || deps.isDriving(workflowId) || deps.isCorrupt(workflowId)) continue;
      if (deps.isEligible(value)) deps.drive(workflowId, 'recover');
    }
    if (page.length < 500) return;
    after = page[page.length - 1]!.key;
  }
}

export class NoOwnership implements Ownership {
  readonly mode = 'none' as const;
  readonly sharesStore = false;
  readonly claimsHeld = 0;

  constructor(protected readonly deps: OwnershipDeps) {}

  async checkGates(): Promise<void> {}

  async open(): Promise<void> {}

  fence(): Fence | WriteOutcome {
    return noFence;
  }

  async classifyRefusal(): Promise<WriteOutcome> {
    return { ok: false, reason: 'lost-race' };
  }

  foldClaim(): null {
    return null;
  }

  claimLanded(): void {}

  rotation(): null {
    return null;
  }

  rotated(): void {}

  async claimForResume(): Promise<void> {}

  drives(): boolean {
    return true;
  }

  heldEpoch(): number {
    return 0;
  }

  releaseOperations(): Operation[] {
    return [];
  }

  runEnded(): void {}

  async guardWake(): Promise<boolean> {
    return true;
  }

  /** A due timer of a running workflow nobody drives here (after a failed load, say): drive it. */
  noticeChange(workflowId: string, what: WorkflowChange, workflowType?: string): void {
    if (what !== 'timer' || workflowType === undefined) return;
    if (!this.deps.isDriving(workflowId) && this.deps.isEligible(workflowType))
      this.deps.drive(workflowId, 'recover');
  }

  noticeSession(): void {}

  async letGo(): Promise<void> {}

  async renew(): Promise<void> {}

  reclaim(): Promise<void> {
    return driveEveryRunning(this.deps);
  }

  claimLost(): void {}

  async holderOf(): Promise<ClaimHolder | null> {
    return null;
  }

  async claimOne(workflowId: string): Promise<ReclaimOutcome> {
    throw new InvalidOptionsError(
      `reclaim('${workflowId}') needs ownership 'workflow-lease': under '${this.mode}' there are no per-workflow claims to take over.`,
    );
  }

  owned(driving: () => string[]): string[] {
    return driving();
  }

  async release(): Promise<ReleaseReport> {
    return { claimsReleased: 0, leaseReleased: false };
  }
}
