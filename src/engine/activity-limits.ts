/**
 * Activity concurrency limits (`EngineOptions.activityLimits`): how many attempts of an activity group run at
 * once across the fleet (`concurrency`) and on this engine (`perEngine`) — the knob that protects a
 * downstream API. An activity counts against its `ActivityOptions.limit` group, by default its own name.
 *
 * An attempt takes a slot after its start was committed and before its function is called (run/activities.ts),
 * and gives it back when the function returns or throws, or when the attempt is aborted — whichever comes
 * first (a function that ignores its AbortSignal may still run after that). Waiters of a group on one engine
 * are served in arrival order (two engines racing for the last slots may let a later waiter of this engine in
 * first: the one that lost its race reads again at the head of the line).
 *
 * - `perEngine`, and `concurrency` outside `workflow-lease` (one engine drives every workflow): an in-memory
 *   semaphore.
 * - `concurrency` under `workflow-lease`: durable slots `act-slot:<group>:<i>`, i < concurrency, each
 *   `{ engineId, workflowId, position, member, attempt, at, seq }`. A slot is free when absent, or when its
 *   holder is stale: this engine, but no attempt it runs holds that exact value (a slot whose release did not
 *   land), or another engine whose session is not live (ended, or past `expiresAt + grace`, grace = two
 *   renew intervals, or dead to the liveness oracle) — judged as claims are (ownership/session.ts). A slot
 *   is taken by a conditional put (expected: absent, or the stale value's exact text), only while fewer than
 *   `concurrency` slots of the group are held live; a lost race reads again. Released by a delete
 *   conditioned on the exact value (a failed release reads as stale to this engine and is reused). Waiters
 *   read again when a slot of their group is released here, when the change feed reports one of their
 *   group's slot keys, and on each renew interval (`poll`, a maintenance pass). A storage error while taking
 *   a slot leaves the waiters waiting for the next try: nothing runs without a slot.
 *
 * Guarantee: across the fleet at most `concurrency` attempts of a group hold a slot at once. A slot of an
 * engine whose session is no longer live is free from the moment that engine's claims may be taken over:
 * never counted twice, never leaked. A deposed engine that is still alive keeps its slot until its attempt
 * returns or is aborted. Like claims, not guaranteed under clock skew beyond the claim TTL's margin, nor for
 * an engine frozen past its TTL (its session lapses and its slots are taken; its attempts are aborted when it
 * wakes and finds its claims gone, but their functions may still be running).
 */
import type { Storage } from '../storage/types';
import type { Clock } from './clock';
import type { EngineEvent, EngineWarning } from './events';
import { keys, unescapeId } from './keys';
import type { MetricsCounters } from './metrics';
import { mutation } from './mutations';
import type { ActivityLimit } from './options';
import type { EngineLiveness } from './ownership/liveness';
import { decodeSession, isSessionLive, sessionKey } from './ownership/session';

/** Group names of `activityLimits` and `ActivityOptions.limit`. */
export const activityGroupPattern = /^[A-Za-z0-9_.:-]{1,100}$/;

/** The attempt a slot is taken for. */
export type SlotHolder = { workflowId: string; position: number; member: number; attempt: number };

/** One attempt holding a slot of a group (`engine.activityLimits()`). */
export type ActivitySlotHolder = {
  engineId: string;
  workflowId: string;
  /** The activity's operation: its position in the workflow's history and member (in `all`/`race`). */
  position: number;
  member: number;
  attempt: number;
  /** When it took the slot, epoch ms. */
  since: number;
};

/** One declared group (`engine.activityLimits()`). */
export type ActivityLimitInfo = {
  name: string;
  /** Attempts at once across the fleet, or null when only `perEngine` is set. */
  concurrency: number | null;
  /** Attempts at once on this engine, or null when only `concurrency` is set. */
  perEngine: number | null;
  /**
   * The live slot holders: every engine's under `workflow-lease` with `concurrency` (read from the store),
   * this engine's otherwise.
   */
  running: ActivitySlotHolder[];
  /** Attempts of the group holding a slot on this engine. */
  runningHere: number;
  /** Attempts of the group waiting for a slot on this engine. */
  waitingHere: number;
};

/** An attempt's place in its group's line (`ActivityLimits.acquire`). */
export interface SlotTicket {
  /** True once the slot is held (it may be at once, when there was room here and no store to ask). */
  readonly held: boolean;
  /** Resolves true when the slot is held; false when the ticket was released first. */
  readonly granted: Promise<boolean>;
  /** Leaves the line, or gives the slot back. Idempotent. */
  release(): void;
}

export type StoredSlot = SlotHolder & { engineId: string; at: number; seq: number };

type Ticket = SlotTicket & {
  group: Group;
  holder: SlotHolder;
  activity: string;
  state: 'waiting' | 'taking' | 'held' | 'released';
  /** Counted and announced as waiting once. */
  waited: boolean;
  since: number;
  /** The durable slot it holds: its key and exact value. */
  key?: string;
  raw?: string;
  resolve: (held: boolean) => void;
};

type Group = {
  name: string;
  limit: ActivityLimit;
  /** Durable slots in the store (`workflow-lease` with `concurrency`). */
  durable: boolean;
  /** Attempts at once here (`perEngine`; outside `workflow-lease`, also `concurrency`). */
  localCap: number;
  waiting: Ticket[];
  /** Tickets whose slot is being written (durable). */
  taking: Set<Ticket>;
  held: Set<Ticket>;
  /** A durable take is in flight; `again`: something changed meanwhile, read again after it. */
  reading: boolean;
  again: boolean;
};

/** A slot as read, judged: live (held by a live attempt), or free to take (`expected`: its exact text). */
type JudgedSlot = { key: string; raw: string; slot: StoredSlot | null; live: boolean };

export type ActivityLimitsDeps = {
  storage: Storage;
  clock: Clock;
  random: () => number;
  engineId: string;
  limits: ReadonlyMap<string, ActivityLimit>;
  /** `workflow-lease`: several engines drive workflows, so `concurrency` is kept in the store. */
  durable: boolean;
  /** Grace past a session's `expiresAt` (two renew intervals, as for claims). */
  graceMs: number;
  liveness: EngineLiveness | undefined;
  metrics: MetricsCounters;
  emit: (event: EngineEvent) => void;
  warn: (warning: EngineWarning) => void;
  isOpen: () => boolean;
};

export class ActivityLimits {
  readonly #deps: ActivityLimitsDeps;
  readonly #groups = new Map<string, Group>();
  /** Durable slots this engine's attempts hold: key → exact value. */
  readonly #heldSlots = new Map<string, string>();
  /** Releases in flight (shutdown waits for them). */
  readonly #releasing = new Set<Promise<unknown>>();
  #seq = 0;

  constructor(deps: ActivityLimitsDeps) {
    this.#deps = deps;
    for (const [name, limit] of deps.limits) {
      const durable = deps.durable && limit.concurrency !== undefined;
      this.#groups.set(name, {
        name,
        limit,
        durable,
        localCap: Math.min(limit.perEngine ?? Infinity, durable ? Infinity : (limit.concurrency ?? Infinity)),
        waiting: [],
        taking: new Set(),
        held: new Set(),
        reading: false,
        again: false,
      });
    }
  }

  /** The limited group an activity call counts against, or undefined (no limit: it runs at once). */
  groupOf(activity: string, limit: string | undefined): string | undefined {
    if (this.#groups.size === 0) return undefined;
    const name = limit ?? activity;
    return this.#groups.has(name) ? name : undefined;
  }

  /** Joins the line of `group` (a name `groupOf` returned) for one attempt of `activity`. */
  acquire(group: string, activity: string, holder: SlotHolder): SlotTicket {
    const state = this.#groups.get(group)!;
    let resolve!: (held: boolean) => void;
    const granted = new Promise<boolean>((r) => (resolve = r));
    const ticket: Ticket = {
      group: state,
      holder,
      activity,
      state: 'waiting',
      waited: false,
      since: 0,
      granted,
      resolve,
      get held() {
        return ticket.state === 'held';
      },
      release: () => this.#release(ticket),
    };
    state.waiting.push(ticket);
    this.#pump(state);
    return ticket;
  }

  /** Keys the change feed reported: a slot of a group with waiters here changed, so they read again. */
  changed(key: string): void {
    const escaped = key.slice(keys.activitySlotsPrefix.length).split(':')[0];
    if (escaped === undefined) return;
    const group = this.#groups.get(unescapeId(escaped));
    if (group?.durable && group.waiting.length > 0) this.#pump(group);
  }

  /** The poll (a maintenance pass, each renew interval): every group with waiters reads again. */
  async poll(): Promise<void> {
    const takes: Promise<void>[] = [];
    for (const group of this.#groups.values())
      if (group.durable && group.waiting.length > 0) takes.push(this.#take(group));
    await Promise.all(takes);
  }

  /** Resolves when every release in flight has landed (or failed). */
  async drained(): Promise<void> {
    while (this.#releasing.size > 0) await Promise.all([...this.#releasing]);
  }

  /** Every declared group, with its holders (read from the store for durable groups). */
  async view(): Promise<ActivityLimitInfo[]> {
    const infos: ActivityLimitInfo[] = [];
    for (const group of this.#groups.values()) {
      let running: ActivitySlotHolder[];
      if (group.durable) {
        const judged = await this.#read(group);
        running = judged.flatMap(({ slot, live }) =>
          slot && live
            ? [
                {
                  engineId: slot.engineId,
                  workflowId: slot.workflowId,
                  position: slot.position,
                  member: slot.member,
                  attempt: slot.attempt,
                  since: slot.at,
                },
              ]
            : [],
        );
      } else
        running = [...group.held].map((ticket) => ({
          engineId: this.#deps.engineId,
          ...ticket.holder,
          since: ticket.since,
        }));
      infos.push({
        name: group.name,
        concurrency: group.limit.concurrency ?? null,
        perEngine: group.limit.perEngine ?? null,
        running,
        runningHere: group.held.size,
        waitingHere: group.waiting.length + group.taking.size,
      });
    }
    return infos;
  }

  // -------------------------------------------------------------------------------------------------------

  #pump(group: Group): void {
    if (!this.#deps.isOpen()) return;
    if (group.durable) {
      void this.#take(group);
      return;
    }
    while (group.waiting.length > 0 && group.held.size < group.localCap) {
      const ticket = group.waiting.shift()!;
      this.#grant(ticket);
    }
    this.#markWaiting(group);
  }

  #grant(ticket: Ticket): void {
    ticket.state = 'held';
    ticket.since = this.#deps.clock.now();
    ticket.group.held.add(ticket);
    ticket.resolve(true);
  }

  /** Tickets still in line after a try: counted and announced once each. */
  #markWaiting(group: Group): void {
    for (const ticket of group.waiting) {
      if (ticket.waited) continue;
      ticket.waited = true;
      this.#deps.metrics.activityWaits++;
      this.#deps.emit({
        type: 'activity.waiting',
        workflowId: ticket.holder.workflowId,
        name: ticket.activity,
        group: group.name,
        attempt: ticket.holder.attempt,
      });
    }
  }

  #release(ticket: Ticket): void {
    const group = ticket.group;
    const was = ticket.state;
    if (was === 'released') return;
    ticket.state = 'released';
    if (was === 'waiting') {
      const index = group.waiting.indexOf(ticket);
      if (index >= 0) group.waiting.splice(index, 1);
      ticket.resolve(false);
      return;
    }
    if (was === 'taking') {
      ticket.resolve(false); // its slot, if the put lands, is given back at once (#takeOnce)
      return;
    }
    group.held.delete(ticket);
    if (!group.durable || ticket.key === undefined) {
      this.#pump(group);
      return;
    }
    this.#giveBack(group, ticket.key, ticket.raw!);
  }

  /** Deletes a durable slot this engine held (conditioned on its exact value), then lets waiters read again. */
  #giveBack(group: Group, key: string, raw: string): void {
    if (this.#heldSlots.get(key) === raw) this.#heldSlots.delete(key);
    const release = this.#deps.storage
      .conditionalBatch([{ key, expected: raw }], [{ type: 'delete', key }])
      .catch(() => false) // a release that does not land reads as stale to this engine, and is reused
      .finally(() => {
        this.#releasing.delete(release);
        if (group.waiting.length > 0) this.#pump(group);
      });
    this.#releasing.add(release);
  }

  /** Durable: reads the group's slots and takes free ones for the head of the line; one take at a time. */
  async #take(group: Group): Promise<void> {
    if (group.reading) {
      group.again = true;
      return;
    }
    group.reading = true;
    try {
      do {
        group.again = false;
        if (!this.#deps.isOpen()) return;
        await this.#takeOnce(group);
      } while (group.again && group.waiting.length > 0);
    } catch (error) {
      this.#deps.warn({
        name: 'StorageWarning',
        message: `Taking a slot of activity limit group '${group.name}' failed (its waiters try again on the next poll): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
      });
    } finally {
      group.reading = false;
    }
  }

  async #takeOnce(group: Group): Promise<void> {
    if (group.waiting.length === 0) return;
    if (group.held.size >= group.localCap) {
      this.#markWaiting(group);
      return;
    }
    const judged = await this.#read(group);
    const concurrency = group.limit.concurrency!;
    const liveCount = judged.filter((slot) => slot.live).length;
    const byKey = new Map(judged.map((slot) => [slot.key, slot]));
    const free: { key: string; expected: string | null }[] = [];
    for (let index = 0; index < concurrency; index++) {
      const key = keys.activitySlot(group.name, index);
      const slot = byKey.get(key);
      if (!slot) free.push({ key, expected: null });
      else if (!slot.live) free.push({ key, expected: slot.raw });
    }
    const count = Math.min(
      concurrency - liveCount,
      free.length,
      group.localCap - group.held.size,
      group.waiting.length,
    );
    if (count <= 0) {
      this.#markWaiting(group);
      return;
    }
    // Engines start at different free slots, so that they seldom race for the same one.
    const offset = Math.floor(this.#deps.random() * free.length);
    const chosen = Array.from({ length: count }, (_, i) => free[(offset + i) % free.length]!);
    const tickets = group.waiting.splice(0, count);
    const now = this.#deps.clock.now();
    const writes = tickets.map((ticket, i) => {
      ticket.state = 'taking';
      group.taking.add(ticket);
      const { key, expected } = chosen[i]!;
      const raw = JSON.stringify({
        engineId: this.#deps.engineId,
        ...ticket.holder,
        at: now,
        seq: ++this.#seq,
      } satisfies StoredSlot);
      // Held from now, as far as this engine judges its own slots (the view reads it as live).
      this.#heldSlots.set(key, raw);
      return { ticket, key, expected, raw };
    });
    const landed = await Promise.all(
      writes.map(({ key, expected, raw }) =>
        this.#deps.storage
          .conditionalBatch([{ key, expected }], [{ type: 'put', key, value: raw }])
          .catch((error: unknown) => error),
      ),
    );
    const lost: Ticket[] = [];
    let failure: unknown = undefined;
    for (const [i, { ticket, key, raw }] of writes.entries()) {
      const outcome = landed[i];
      group.taking.delete(ticket);
      if (outcome === true) {
        if (ticket.state === 'released') this.#giveBack(group, key, raw);
        else {
          ticket.key = key;
          ticket.raw = raw;
          this.#grant(ticket);
        }
        continue;
      }
      if (this.#heldSlots.get(key) === raw) this.#heldSlots.delete(key);
      if (outcome !== false) failure = outcome;
      if (ticket.state === 'released') continue;
      ticket.state = 'waiting';
      lost.push(ticket);
    }
    group.waiting.unshift(...lost);
    if (failure !== undefined) throw failure;
    if (lost.length > 0) group.again = true; // lost a race: read again
  }

  /** The group's stored slots, each judged live or free. */
  async #read(group: Group): Promise<JudgedSlot[]> {
    const { storage, engineId, clock, liveness, graceMs } = this.#deps;
    const entries = await storage.scan(keys.activitySlotsOf(group.name));
    const slots = entries.map(({ key, value }) => ({ key, raw: value, slot: decodeActivitySlot(value) }));
    const others = [
      ...new Set(slots.flatMap(({ slot }) => (slot && slot.engineId !== engineId ? [slot.engineId] : []))),
    ];
    const sessions = others.length === 0 ? [] : await storage.getMany(others.map((id) => sessionKey(id)));
    const now = clock.now();
    const live = new Map<string, boolean>();
    await Promise.all(
      others.map(async (id, i) => {
        const raw = sessions[i];
        const sessionLive = isSessionLive(raw ? decodeSession(raw) : null, now, graceMs);
        const dead = mutation() === 'activity-slot-holders-dead' || (liveness && (await liveness.isDead(id)));
        live.set(id, sessionLive && !dead);
      }),
    );
    return slots.map(({ key, raw, slot }) => ({
      key,
      raw,
      slot,
      live:
        slot !== null &&
        (slot.engineId === engineId ? this.#heldSlots.get(key) === raw : live.get(slot.engineId) === true),
    }));
  }
}

/**
 * A stored slot (`act-slot:`), or null when it does not decode (then it is free: fail-closed, like a holder).
 * Also read by the host's view of slots held by engines that do not declare the group.
 */
export function decodeActivitySlot(raw: string): StoredSlot | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const slot = value as Record<string, unknown>;
  if (typeof slot.engineId !== 'string' || typeof slot.workflowId !== 'string') return null;
  for (const field of [slot.position, slot.member, slot.attempt, slot.at])
    if (typeof field !== 'number' || !Number.isFinite(field)) return null;
  return value as StoredSlot;
}
