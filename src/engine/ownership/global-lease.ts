/**
 * The store-wide lease (`ownership: 'lease'`): one engine at a time holds `lease:holder`, fenced by
 * `lease:epoch`; the others wait in `createEngine`. Every write of the holder conditions on its lease epoch
 * (fenced-write.ts), so once the lease is stolen the whole engine is deposed: every later write fails at
 * once and the engine stops.
 */
import type { Condition, Operation, Storage } from '../../storage/types';
import type { Clock } from '../clock';
import { EngineLeaseAcquisitionTimeoutError } from '../errors';
import { keys } from '../keys';
import { buildAcquire, buildRelease, buildRenew, buildTakeover, type ClaimKeys } from './transitions';
import { decodeEpoch, isClaimExpired, readHolder, type Holder } from './holder';
import type { EngineLiveness } from './liveness';

const leaseKeys: ClaimKeys = { epochKey: keys.leaseEpoch, holderKey: keys.leaseHolder };

export type HeldLease = { epoch: number; epochRaw: string; holder: Holder; holderRaw: string };

export type GlobalLeaseDeps = {
  storage: Storage;
  commit: (conditions: Condition[], operations: Operation[]) => Promise<boolean>;
  engineId: string;
  clock: Clock;
  ttlMs: number;
  renewIntervalMs: number;
  waitTimeoutMs: number;
  liveness: EngineLiveness | undefined;
  onLost: (epoch: number) => void;
};

export class GlobalLease {
  readonly #deps: GlobalLeaseDeps;
  #held: HeldLease | null = null;
  #deposed = false;

  constructor(deps: GlobalLeaseDeps) {
    this.#deps = deps;
  }

  current(): HeldLease | null {
    return this.#deposed ? null : this.#held;
  }

  get isDeposed(): boolean {
    return this.#deposed;
  }

  markDeposed(): void {
    if (this.#deposed || !this.#held) return;
    this.#deposed = true;
    this.#deps.onLost(this.#held.epoch);
  }

  /** One attempt: true if this engine now holds the lease; otherwise returns the current holder. */
  async tryAcquire(): Promise<{ acquired: true } | { acquired: false; holder: Holder | null }> {
    const { storage, clock, engineId, ttlMs, renewIntervalMs, liveness } = this.#deps;
    const [epochRaw, holderRaw] = await storage.getMany([keys.leaseEpoch, keys.leaseHolder]);
    const storedEpoch = decodeEpoch(keys.leaseEpoch, epochRaw ?? null);
    const read = readHolder(holderRaw ?? null);
    const now = clock.now();
    const who = { engineId, now, ttlMs };
    let minted;
    if (!read) minted = buildAcquire(leaseKeys, { epochRaw: epochRaw ?? null, storedEpoch }, who);
    else {
      const dead = read.holder && liveness ? await liveness.isDead(read.holder.engineId) : false;
      if (!isClaimExpired(read.holder, now, 2 * renewIntervalMs, dead))
        return { acquired: false, holder: read.holder };
      minted = buildTakeover(
        leaseKeys,
        { epochRaw: epochRaw ?? null, storedEpoch, holderRaw: read.raw },
        who,
      );
    }
    if (!(await this.#deps.commit(minted.conditions, minted.operations)))
      return { acquired: false, holder: read?.holder ?? null };
    this.#held = {
      epoch: minted.epoch,
      epochRaw: minted.epochRaw,
      holder: minted.holder,
      holderRaw: minted.holderRaw,
    };
    this.#deposed = false;
    return { acquired: true };
  }

  /** Waits (polling every renew interval) until the lease is held, or fails after `waitTimeoutMs`. */
  async acquire(): Promise<HeldLease> {
    const { clock, waitTimeoutMs, renewIntervalMs, engineId } = this.#deps;
    const startedAt = clock.now();
    for (;;) {
      const attempt = await this.tryAcquire();
      if (attempt.acquired) return this.#held!;
      const waited = clock.now() - startedAt;
      if (waited >= waitTimeoutMs)
        throw new EngineLeaseAcquisitionTimeoutError(engineId, attempt.holder, waited);
      await new Promise<void>((resolve) =>
        clock.setTimeout(resolve, Math.min(renewIntervalMs, waitTimeoutMs - waited)),
      );
    }
  }

  /** Renews the lease. A refused renewal deposes the engine; a storage error keeps it (retried next time). */
  async renew(): Promise<boolean> {
    const held = this.current();
    if (!held) return false;
    const renewal = buildRenew(leaseKeys, held, this.#deps.clock.now(), this.#deps.ttlMs);
    if (await this.#deps.commit(renewal.conditions, renewal.operations)) {
      this.#held = { ...held, holder: renewal.holder, holderRaw: renewal.holderRaw };
      return true;
    }
    this.markDeposed();
    return false;
  }

  /** Releases the lease (shutdown). Resolves true if the holder was deleted by this call. */
  async release(): Promise<boolean> {
    const held = this.current();
    if (!held) return false;
    this.#held = null;
    const release = buildRelease(leaseKeys, held);
    return this.#deps.commit(release.conditions, release.operations);
  }
}
