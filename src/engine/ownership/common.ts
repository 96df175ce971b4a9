/**
 * What the three `Ownership` strategies share: the construction gate every mode checks, the fail-closed read
 * of a fence's epoch key, the empty fence, and — for the two modes in which one engine runs every workflow of
 * the store (`none`, `lease`) — the scan that drives them all and `StoreWideOwnership`, the strategy without
 * per-workflow claims that `NoOwnership` and `LeaseOwnership` extend.
 */
import type { Operation, Storage } from '../../storage/types';
import { InvalidOptionsError } from '../errors';
import { keys, workflowIdOf } from '../keys';
import { checkModeMarker } from './mode-marker';
import type { OwnershipMode } from '../options';
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

/** A write that carries no condition of its own beyond those of the caller. */
export const noFence: Fence = { conditions: [], heldEpoch: 0 };

/** The construction gates of a mode (mode-marker.ts): refuses a store another mode has been used on. */
export async function checkOwnershipGates(deps: OwnershipDeps, mode: OwnershipMode): Promise<void> {
  await checkModeMarker(
    deps.storage,
    (conditions, operations) => deps.committer.commit(conditions, operations),
    mode,
    deps.clock.now(),
  );
}

/**
 * The stored value of an epoch key, read after a fenced write was refused; `undefined` when the read throws,
 * which the caller counts as deposed (fail closed).
 */
export async function readFenceEpoch(storage: Storage, key: string): Promise<string | null | undefined> {
  try {
    return await storage.get(key);
  } catch {
    return undefined;
  }
}

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

/**
 * A strategy in which the engine that drives at all drives every running workflow it has a definition for
 * (`none`, `lease`): no per-workflow claims to fold, rotate, renew, release or take over, and recovery is
 * the same scan of the running workflows. A subclass says how it fences writes, reads a refusal, opens,
 * renews and releases, and whether it still drives (`lease`: until it is deposed).
 */
export abstract class StoreWideOwnership implements Ownership {
  abstract readonly mode: Exclude<OwnershipMode, 'workflow-lease'>;
  abstract readonly sharesStore: boolean;
  readonly claimsHeld = 0;

  constructor(protected readonly deps: OwnershipDeps) {}

  abstract checkGates(): Promise<void>;
  abstract open(): Promise<void>;
  abstract fence(): Fence | WriteOutcome;
  abstract classifyRefusal(workflowId: string | null, fence: Fence): Promise<WriteOutcome>;
  abstract drives(): boolean;
  abstract renew(): Promise<void>;
  abstract release(): Promise<ReleaseReport>;

  foldClaim(): null {
    return null;
  }

  claimLanded(): void {}

  rotation(): null {
    return null;
  }

  rotated(): void {}

  displaced(): Operation[] {
    return [];
  }

  async claimForResume(): Promise<void> {}

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
    if (what !== 'timer' || workflowType === undefined || !this.drives()) return;
    if (!this.deps.isDriving(workflowId) && this.deps.isEligible(workflowType))
      this.deps.drive(workflowId, 'recover');
  }

  noticeSession(): void {}

  noticeDisplacement(): void {}

  async letGo(): Promise<void> {}

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
}
