/**
 * The claims this engine holds (workflow-lease), and its takeover cooldowns. In-memory only: the durable
 * truth is the holder and epoch keys; this registry caches the exact strings this engine last wrote, which
 * its renewals and fenced writes condition on.
 *
 * A claim's lifecycle goes through one reducer (`reduceClaim`): held → (renewed)* → releasing → gone, or
 * held → lost. Losing a claim starts a cooldown before this engine may take the workflow back (one renew
 * interval, doubling on each consecutive loss, capped at 4 × TTL; cleared by a successful acquire), so two
 * engines cannot thrash over one workflow.
 */
import type { Holder } from './holder';

export type Claim = {
  workflowId: string;
  epoch: number;
  epochRaw: string;
  holder: Holder;
  holderRaw: string;
  status: 'held' | 'releasing';
};

export type ClaimAction =
  | { type: 'acquired'; claim: Omit<Claim, 'status'> }
  | { type: 'renewed'; holder: Holder; holderRaw: string }
  | { type: 'release-started' }
  | { type: 'released' }
  | { type: 'lost' };

export function reduceClaim(claim: Claim | undefined, action: ClaimAction): Claim | undefined {
  switch (action.type) {
    case 'acquired':
      return { ...action.claim, status: 'held' };
    case 'renewed':
      return claim && claim.status === 'held' && claim.holder.epoch === action.holder.epoch
        ? { ...claim, holder: action.holder, holderRaw: action.holderRaw }
        : claim;
    case 'release-started':
      return claim ? { ...claim, status: 'releasing' } : claim;
    case 'released':
    case 'lost':
      return undefined;
  }
}

type Cooldown = { until: number; consecutiveLosses: number };

export class ClaimRegistry {
  readonly #claims = new Map<string, Claim>();
  readonly #cooldowns = new Map<string, Cooldown>();
  readonly #renewIntervalMs: number;
  readonly #maxCooldownMs: number;

  constructor(timing: { renewIntervalMs: number; ttlMs: number }) {
    this.#renewIntervalMs = timing.renewIntervalMs;
    this.#maxCooldownMs = 4 * timing.ttlMs;
  }

  get(workflowId: string): Claim | undefined {
    return this.#claims.get(workflowId);
  }

  has(workflowId: string): boolean {
    return this.#claims.has(workflowId);
  }

  get size(): number {
    return this.#claims.size;
  }

  all(): Claim[] {
    return [...this.#claims.values()];
  }

  dispatch(workflowId: string, action: ClaimAction, now?: number): Claim | undefined {
    const next = reduceClaim(this.#claims.get(workflowId), action);
    if (next) this.#claims.set(workflowId, next);
    else this.#claims.delete(workflowId);
    if (action.type === 'acquired') this.#cooldowns.delete(workflowId);
    if (action.type === 'lost' && now !== undefined) this.#startCooldown(workflowId, now);
    return next;
  }

  #startCooldown(workflowId: string, now: number): void {
    const previous = this.#cooldowns.get(workflowId);
    const consecutiveLosses = (previous?.consecutiveLosses ?? 0) + 1;
    const length = Math.min(this.#renewIntervalMs * 2 ** (consecutiveLosses - 1), this.#maxCooldownMs);
    this.#cooldowns.set(workflowId, { until: now + length, consecutiveLosses });
  }

  /** True while this engine must not try to take `workflowId` back. */
  isCoolingDown(workflowId: string, now: number): boolean {
    const cooldown = this.#cooldowns.get(workflowId);
    return cooldown !== undefined && now < cooldown.until;
  }

  cooldownUntil(workflowId: string): number | undefined {
    return this.#cooldowns.get(workflowId)?.until;
  }
}
