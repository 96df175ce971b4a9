/**
 * `ownership: 'lease'`: one engine at a time holds the store-wide lease (global-lease.ts), the others wait in
 * `createEngine`. Every write of the holder is fenced by the lease epoch; once the lease is stolen the whole
 * engine is deposed: every later write is refused at once and the engine stops driving. The holder drives
 * every running workflow it has a definition for, like an engine of mode `none`.
 */
import type { Operation } from '../../storage/types';
import { keys } from '../keys';
import { GlobalLease } from './global-lease';
import { tryDecodeEpoch } from './holder';
import { checkModeMarker } from './mode-marker';
import { driveEveryRunning } from './none';
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

export class LeaseOwnership implements Ownership {
  readonly mode = 'lease' as const;
  readonly sharesStore = true;
  readonly claimsHeld = 0;
  readonly #deps: OwnershipDeps;
  readonly #lease: GlobalLease;

  constructor(deps: OwnershipDeps) {
    this.#deps = deps;
    this.#lease = new GlobalLease({
      storage: deps.storage,
      commit: (conditions, operations) => deps.committer.commit(conditions, operations),
      engineId: deps.engineId,
      clock: deps.clock,
      ttlMs: deps.ttlMs,
      renewIntervalMs: deps.renewIntervalMs,
      waitTimeoutMs: deps.leaseWaitTimeoutMs,
      liveness: deps.liveness,
      onLost: (epoch) => deps.deposeEngine(epoch),
    });
  }

  async checkGates(): Promise<void> {
    await checkModeMarker(
      this.#deps.storage,
      (conditions, operations) => this.#deps.committer.commit(conditions, operations),
      this.mode,
      this.#deps.clock.now(),
    );
  }

  async open(): Promise<void> {
    await this.checkGates();
    const held = await this.#lease.acquire();
    this.#deps.emit({ type: 'lease.acquired', epoch: held.epoch });
  }

  /** Anchored writes too: taking the lease over replaces no checkpoint, so only the lease epoch fences. */
  fence(): Fence | WriteOutcome {
    const held = this.#lease.current();
    if (!held) return { ok: false, reason: 'deposed', heldEpoch: 0, currentEpoch: null };
    return { conditions: [{ key: keys.leaseEpoch, expected: held.epochRaw }], heldEpoch: held.epoch };
  }

  async classifyRefusal(_workflowId: string | null, fence: Fence): Promise<WriteOutcome> {
    const held = this.#lease.current();
    let currentRaw: string | null | undefined;
    try {
      currentRaw = await this.#deps.storage.get(keys.leaseEpoch);
    } catch {
      currentRaw = undefined; // a failing read counts as deposed: fail closed
    }
    if (held && currentRaw === held.epochRaw) return { ok: false, reason: 'lost-race' };
    this.#lease.markDeposed();
    return {
      ok: false,
      reason: 'deposed',
      heldEpoch: fence.heldEpoch,
      currentEpoch: currentRaw ? (tryDecodeEpoch(currentRaw) ?? null) : null,
    };
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
    return !this.#lease.isDeposed;
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

  noticeChange(workflowId: string, what: WorkflowChange, workflowType?: string): void {
    if (what !== 'timer' || workflowType === undefined || this.#lease.isDeposed) return;
    if (!this.#deps.isDriving(workflowId) && this.#deps.isEligible(workflowType))
      this.#deps.drive(workflowId, 'recover');
  }

  noticeSession(): void {}

  async letGo(): Promise<void> {}

  async renew(): Promise<void> {
    await this.#lease.renew().catch(() => undefined);
  }

  reclaim(): Promise<void> {
    return driveEveryRunning(this.#deps);
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
    if (this.#lease.isDeposed) return { claimsReleased: 0, leaseReleased: false };
    const leaseReleased = await this.#lease.release().catch(() => false);
    return { claimsReleased: 0, leaseReleased };
  }
}
