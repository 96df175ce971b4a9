/**
 * `ownership: 'lease'`: one engine at a time holds the store-wide lease (global-lease.ts), the others wait in
 * `createEngine`. Every write of the holder is fenced by the lease epoch; once the lease is stolen the whole
 * engine is deposed: every later write is refused at once and the engine stops driving. The holder drives
 * every running workflow it has a definition for, like an engine of mode `none` (`StoreWideOwnership`,
 * common.ts).
 */
import { keys } from '../keys';
import { checkOwnershipGates, readFenceEpoch, StoreWideOwnership } from './common';
import { GlobalLease } from './global-lease';
import { tryDecodeEpoch } from './holder';
import type { Fence, OwnershipDeps, ReleaseReport, WriteOutcome } from './ownership';

export class LeaseOwnership extends StoreWideOwnership {
  readonly mode = 'lease' as const;
  readonly sharesStore = true;
  readonly #lease: GlobalLease;

  constructor(deps: OwnershipDeps) {
    super(deps);
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

  checkGates(): Promise<void> {
    return checkOwnershipGates(this.deps, this.mode);
  }

  async open(): Promise<void> {
    await this.checkGates();
    const held = await this.#lease.acquire();
    this.deps.emit({ type: 'lease.acquired', epoch: held.epoch });
  }

  /** Anchored writes too: taking the lease over replaces no checkpoint, so only the lease epoch fences. */
  fence(): Fence | WriteOutcome {
    const held = this.#lease.current();
    if (!held) return { ok: false, reason: 'deposed', heldEpoch: 0, currentEpoch: null };
    return { conditions: [{ key: keys.leaseEpoch, expected: held.epochRaw }], heldEpoch: held.epoch };
  }

  async classifyRefusal(_workflowId: string | null, fence: Fence): Promise<WriteOutcome> {
    const held = this.#lease.current();
    const currentRaw = await readFenceEpoch(this.deps.storage, keys.leaseEpoch);
    if (held && currentRaw === held.epochRaw) return { ok: false, reason: 'lost-race' };
    this.#lease.markDeposed();
    return {
      ok: false,
      reason: 'deposed',
      heldEpoch: fence.heldEpoch,
      currentEpoch: currentRaw ? (tryDecodeEpoch(currentRaw) ?? null) : null,
    };
  }

  drives(): boolean {
    return !this.#lease.isDeposed;
  }

  async renew(): Promise<void> {
    await this.#lease.renew().catch(() => undefined);
  }

  async release(): Promise<ReleaseReport> {
    if (this.#lease.isDeposed) return { claimsReleased: 0, leaseReleased: false };
    const leaseReleased = await this.#lease.release().catch(() => false);
    return { claimsReleased: 0, leaseReleased };
  }
}
