/**
 * Workflow queues across engines: admission, and the read-only views the studio, the CLI and the HTTP API
 * show. Design: docs/engine.md, "Queues and flow control".
 *
 * A workflow started onto a queue is stored `pending` with `record.queue` and a wait entry
 * (`queue-wait:<queue>:<order>:<id>`, in admission order). Any engine that declares the queue admits it when
 * the queue has room: one conditional batch (lifecycle.ts `admitQueued`) flips it to running with the claim
 * folded in, deletes its wait entry, and takes a numbered slot `queue-slot:<queue>:<i>` (i < concurrency),
 * a key slot `queue-kslot:<queue>:<key>:<j>` (j < perKeyConcurrency) and a rate token
 * `queue-rate:<queue>:<r>` (r < limit, usable again a period after its last use) — each conditioned on the
 * value just read. The slots belong to the workflow, not to an engine: they move with it through crashes and
 * takeovers and are deleted by the transition that ends it, in the same batch (release.ts). So at every
 * instant the queue's running workflows are exactly its held slots, never more than the limit.
 *
 * Admission runs when a workflow is enqueued here, when the change feed reports a queue key (a slot freed, a
 * workflow enqueued elsewhere), when a delay or rate window ends (a timer of this engine), and on every
 * maintenance pass (the poll: correct without a change feed).
 */
import type { Storage } from '../../storage/types';
import type { Clock } from '../clock';
import type { EngineWarning } from '../events';
import { keys, unescapeId } from '../keys';
import type { Lifecycle, QueueGrant } from '../lifecycle';
import { decodeRecord, isTerminal, type WorkflowRecord } from '../records';
import { mutation } from '../mutations';
import type { QueueDeclaration } from './queue-options';
import { decodeRateToken, decodeSlot, decodeWaitEntry, type WaitEntry } from './records';

export type QueuesDeps = {
  storage: Storage;
  clock: Clock;
  lifecycle: Lifecycle;
  declarations: ReadonlyMap<string, QueueDeclaration>;
  /** False for an observer engine: it enqueues, but never admits (it runs nothing). */
  admits: boolean;
  /** This engine has a definition of `type`, so it may admit (and run) its workflows. */
  mayDrive: (type: string) => boolean;
  /** The workflows of `queue` with a run on this engine. */
  queueMembers: (queue: string) => string[];
  /** This engine drives the workflow or is loading it. */
  isDriving: (workflowId: string) => boolean;
  /** Timers of its own wake admission when a delay or rate window ends (false: the poll does). */
  automatic: boolean;
  isOpen: () => boolean;
  warn: (warning: EngineWarning) => void;
};

/** One queue as the studio and the CLI show it (`engine.queues()`). */
export type QueueView = {
  name: string;
  concurrency: number | null;
  perKeyConcurrency: number | null;
  perEngineConcurrency: number | null;
  rateLimit: { limit: number; periodMs: number } | null;
  priorityStepMs: number;
  /** Admitted and not finished (the held slots); null for a queue without a `concurrency` limit. */
  running: number | null;
  /** The workflows holding its slots. */
  slots: { slot: number; workflowId: string; since: number; admittedBy: string }[];
  /** Waiting to be admitted (counted up to `countLimit`; `waitingCapped` when there are more). */
  waiting: number;
  waitingCapped: boolean;
  /** The first waiting workflows, in admission order. */
  next: { workflowId: string; type: string; key?: string; notBefore?: number }[];
  /** When the workflow first in line was enqueued (null: none waits). */
  oldestEnqueuedAt: number | null;
  /** Admissions in the current rate window, and when a token is next free (rate-limited queues). */
  rate: { usedInWindow: number; nextFreeAt: number | null } | null;
  /** Per concurrency key: running (held key slots) and waiting (among those counted). */
  keys: { key: string; running: number; waiting: number }[];
  /** This engine drives this many of its workflows now. */
  drivenHere: number;
};

/** Where a workflow stands in its queue (`engine.queuePosition`). */
export type QueuePosition = {
  queue: string;
  status: 'waiting' | 'admitted';
  /** 1 = next to be admitted (waiting only; counted up to 10,000). */
  position?: number;
  key?: string;
  priority: number;
  enqueuedAt: number;
  notBefore?: number;
  admittedAt?: number;
  slot?: number;
};

const waitPage = 100;
/** How many pages of waiting workflows one admission round reads at most (10,000 entries). */
const waitPages = 100;
const countLimit = 10_000;

function slotIndex(key: string): number {
  return Number(key.slice(key.lastIndexOf(':') + 1));
}

export class Queues {
  readonly #deps: QueuesDeps;
  readonly #passes = new Map<string, Promise<void>>();
  readonly #again = new Set<string>();
  readonly #wakes = new Map<string, { at: number; handle: unknown }>();
  /**
   * Queues this engine last saw with workflows waiting (or no room): a start onto one goes straight into the
   * queue without reading whether it could be admitted at once. Cleared when an admission pass finds nobody
   * waiting. A hint only: wrong either way, a start is admitted a pass later, or reads once more.
   */
  readonly #busy = new Set<string>();
  /** Admitted here and perhaps still loading (not yet among `queueMembers`), by queue. */
  readonly #admittedHere = new Map<string, Set<string>>();

  constructor(deps: QueuesDeps) {
    this.#deps = deps;
  }

  /** How many workflows of `queue` this engine drives now, counting those it admitted and still loads. */
  drivenHere(queue: string): number {
    const ids = new Set(this.#deps.queueMembers(queue));
    const admitted = this.#admittedHere.get(queue);
    if (admitted)
      for (const id of admitted) {
        if (this.#deps.isDriving(id)) ids.add(id);
        else admitted.delete(id);
      }
    return ids.size;
  }

  get declarations(): ReadonlyMap<string, QueueDeclaration> {
    return this.#deps.declarations;
  }

  /** Writes each declaration where the studio and the CLI read it (`queue-def:`), when it changed. */
  async publish(): Promise<void> {
    const { storage, declarations } = this.#deps;
    if (declarations.size === 0) return;
    const names = [...declarations.keys()];
    const stored = await storage.getMany(names.map((name) => keys.queueDeclaration(name)));
    const operations = names.flatMap((name, index) => {
      const value = JSON.stringify(declarations.get(name));
      return stored[index] === value
        ? []
        : [{ type: 'put' as const, key: keys.queueDeclaration(name), value }];
    });
    if (operations.length > 0) await storage.conditionalBatch([], operations);
  }

  /**
   * Whether this engine may drive `record` beside what it drives already: false for a workflow of a queue with
   * a `perEngineConcurrency` this engine has reached without it (one taken over from a dead peer, say).
   */
  mayHold(record: WorkflowRecord): boolean {
    const queue = record.queue && this.#deps.declarations.get(record.queue.name);
    if (!queue || queue.perEngineConcurrency === null || record.status !== 'running') return true;
    const others = new Set(this.#deps.queueMembers(queue.name));
    for (const id of this.#admittedHere.get(queue.name) ?? []) if (this.#deps.isDriving(id)) others.add(id);
    others.delete(record.id);
    return others.size < queue.perEngineConcurrency;
  }

  /**
   * A start onto `queue` that may be admitted in its own create batch: this engine admits, has room under its
   * per-engine limit, nobody waits in the queue (so it overtakes no one), and a slot, a key slot and a rate
   * token are free — each returned with its text as read, the batch's conditions. Null otherwise: it waits.
   */
  async directGrant(
    name: string,
    key: string | undefined,
  ): Promise<Omit<QueueGrant, 'waitKey' | 'waitRaw'> | null> {
    const queue = this.#deps.declarations.get(name);
    if (!queue || !this.#deps.admits || mutation() === 'queue-ignores-limit' || this.#busy.has(name))
      return null;
    if (queue.perEngineConcurrency !== null && this.drivenHere(name) >= queue.perEngineConcurrency)
      return null;
    const { storage, clock } = this.#deps;
    const [waiting, slots, tokens, keySlots] = await Promise.all([
      storage.scan(keys.queueWaitPrefix(name), { limit: 1 }),
      queue.concurrency === null ? Promise.resolve([]) : storage.scan(keys.queueSlotPrefix(name)),
      queue.rateLimit === null ? Promise.resolve([]) : storage.scan(keys.queueRatePrefix(name)),
      key === undefined || queue.perKeyConcurrency === null
        ? Promise.resolve([])
        : storage.scan(keys.queueKeySlotPrefix(name, key)),
    ]);
    if (waiting.length > 0) {
      this.#busy.add(name);
      return null;
    }
    const firstFree = (held: { key: string }[], limit: number): number | null => {
      if (held.length >= limit) return null;
      const taken = new Set(held.map((entry) => slotIndex(entry.key)));
      let index = 0;
      while (taken.has(index)) index++;
      return index < limit ? index : null;
    };
    const grant: Omit<QueueGrant, 'waitKey' | 'waitRaw'> = {};
    if (queue.concurrency !== null) {
      const index = firstFree(slots, queue.concurrency);
      if (index === null) {
        this.#busy.add(name);
        return null;
      }
      grant.slot = { index, expected: null };
    }
    if (key !== undefined && queue.perKeyConcurrency !== null) {
      const index = firstFree(keySlots, queue.perKeyConcurrency);
      if (index === null) return null;
      grant.keySlot = { index, expected: null };
    }
    if (queue.rateLimit !== null) {
      const { limit, periodMs } = queue.rateLimit;
      const byIndex = new Map(tokens.map((entry) => [slotIndex(entry.key), entry.value]));
      const now = clock.now();
      for (let index = 0; index < limit && !grant.rate; index++) {
        const raw = byIndex.get(index) ?? null;
        const token = decodeRateToken(raw);
        if (raw === null || !token || token.at + periodMs <= now) grant.rate = { index, expected: raw };
      }
      if (!grant.rate) return null;
    }
    return grant;
  }

  /** A start onto `queue` was admitted in its create batch (`directGrant`): this engine drives it. */
  admittedDirectly(name: string, workflowId: string): void {
    const here = this.#admittedHere.get(name) ?? new Set<string>();
    here.add(workflowId);
    this.#admittedHere.set(name, here);
  }

  /** A workflow was enqueued onto `queue` here: it has waiting workflows now; look for room. */
  enqueued(queue: string): void {
    this.#busy.add(queue);
    this.kick(queue);
  }

  /** Look for room in `queue` now (coalesced: one pass at a time per queue, and one more after it). */
  kick(queue: string): void {
    const declaration = this.#deps.declarations.get(queue);
    if (!declaration || !this.#deps.admits || !this.#deps.isOpen()) return;
    if (this.#passes.has(queue)) {
      this.#again.add(queue);
      return;
    }
    const pass = (async () => {
      try {
        do {
          this.#again.delete(queue);
          await this.#admit(declaration, false);
        } while (this.#again.has(queue) && this.#deps.isOpen());
      } catch (error) {
        this.#deps.warn({
          name: 'StorageWarning',
          message: `Admission from queue '${queue}' failed (the next pass tries again): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        });
      } finally {
        this.#passes.delete(queue);
      }
    })();
    this.#passes.set(queue, pass);
  }

  /** A key changed in the store (the change feed): a queue key wakes its queue's admission. */
  changed(key: string): void {
    if (!key.startsWith('queue-') || key.startsWith(keys.queueDeclarationsPrefix)) return;
    const rest = key.slice(key.indexOf(':') + 1);
    const name = rest.slice(0, rest.indexOf(':'));
    if (!this.#deps.declarations.has(name)) return;
    if (key.startsWith(keys.queueWaitsPrefix)) this.#busy.add(name);
    this.kick(name);
  }

  /** The maintenance pass: admission in every declared queue, with the stale-slot check. */
  async poll(): Promise<void> {
    if (!this.#deps.admits) return;
    for (const declaration of this.#deps.declarations.values()) {
      if (!this.#deps.isOpen()) return;
      await (this.#passes.get(declaration.name) ?? Promise.resolve());
      await this.#admit(declaration, true);
    }
  }

  /** Passes in flight (shutdown and `idle()` wait for them). */
  get inFlight(): Promise<void>[] {
    return [...this.#passes.values()];
  }

  shutdown(): void {
    for (const { handle } of this.#wakes.values()) this.#deps.clock.clearTimeout(handle);
    this.#wakes.clear();
  }

  /** Wakes this queue's admission at `at` (a delay or a rate window ending), unless an earlier wake is set. */
  #wakeAt(queue: string, at: number): void {
    if (!this.#deps.automatic) return;
    const set = this.#wakes.get(queue);
    if (set && set.at <= at) return;
    if (set) this.#deps.clock.clearTimeout(set.handle);
    const handle = this.#deps.clock.setTimeout(
      () => {
        this.#wakes.delete(queue);
        this.kick(queue);
      },
      Math.max(0, at - this.#deps.clock.now()),
    );
    this.#wakes.set(queue, { at, handle });
  }

  /**
   * Admits waiting workflows while the queue has room: in order, skipping those not yet due, those of types
   * this engine cannot run, and those whose key is full (no head-of-line blocking across keys).
   */
  async #admit(queue: QueueDeclaration, poll: boolean): Promise<void> {
    const { storage, clock, lifecycle } = this.#deps;
    let checkedStale = !poll;
    /** Waiting workflows this pass cannot admit (no definition of their version here, or gone). */
    const skip = new Set<string>();
    let races = 0;
    for (let round = 0; round < 1_000 && this.#deps.isOpen(); round++) {
      const now = clock.now();
      const [slots, tokens, page] = await Promise.all([
        queue.concurrency === null || mutation() === 'queue-ignores-limit'
          ? Promise.resolve([])
          : storage.scan(keys.queueSlotPrefix(queue.name)),
        queue.rateLimit === null ? Promise.resolve([]) : storage.scan(keys.queueRatePrefix(queue.name)),
        storage.scan(keys.queueWaitPrefix(queue.name), { limit: waitPage }),
      ]);
      if (page.length === 0) {
        this.#busy.delete(queue.name); // nobody waits: a start may be admitted at once again
        return;
      }
      // The free slot indices below the limit (null: the queue has no limit), in order.
      let freeSlots: number[] | null = null;
      if (queue.concurrency !== null) {
        if (slots.length >= queue.concurrency) {
          if (checkedStale) return;
          checkedStale = true;
          if (await this.#freeStaleSlots(queue, slots)) continue;
          return;
        }
        const held = new Set(slots.map(({ key }) => slotIndex(key)));
        freeSlots = [];
        for (
          let index = 0;
          index < queue.concurrency && freeSlots.length < queue.concurrency - slots.length;
          index++
        )
          if (!held.has(index)) freeSlots.push(index);
      }
      // The usable rate tokens (null: no rate limit), and when the next one frees up.
      let freeTokens: { index: number; expected: string | null }[] | null = null;
      let tokenFreeAt = Infinity;
      if (queue.rateLimit !== null) {
        const { limit, periodMs } = queue.rateLimit;
        const byIndex = new Map(tokens.map(({ key, value }) => [slotIndex(key), value]));
        freeTokens = [];
        for (let index = 0; index < limit; index++) {
          const raw = byIndex.get(index) ?? null;
          const token = decodeRateToken(raw);
          if (raw === null || !token || token.at + periodMs <= now) freeTokens.push({ index, expected: raw });
          else tokenFreeAt = Math.min(tokenFreeAt, token.at + periodMs);
        }
      }
      const keySlots = new Map<string, Set<number>>();
      let soonest = Infinity;
      // What this round admits: in order, each with its own slot, key slot and token, as far as the free slots,
      // the tokens and the per-engine room go. Their batches are issued together, so the store's group commit
      // can land them in one transaction.
      let room =
        queue.perEngineConcurrency === null
          ? Infinity
          : queue.perEngineConcurrency - this.drivenHere(queue.name);
      const plans: { entry: WaitEntry; key: string; value: string; grant: QueueGrant }[] = [];
      for await (const { key, value } of this.#waiting(queue.name, page)) {
        if (room <= 0) break;
        if (freeSlots !== null && plans.length >= freeSlots.length) break;
        if (freeTokens !== null && plans.length >= freeTokens.length) {
          if (tokenFreeAt < Infinity) this.#wakeAt(queue.name, tokenFreeAt);
          break;
        }
        const entry = decodeWaitEntry(value);
        if (!entry || skip.has(entry.id)) continue;
        if (entry.notBefore !== undefined && entry.notBefore > now) {
          soonest = Math.min(soonest, entry.notBefore);
          continue;
        }
        if (!this.#deps.mayDrive(entry.type)) continue;
        let keySlot: QueueGrant['keySlot'];
        if (entry.key !== undefined && queue.perKeyConcurrency !== null) {
          let taken = keySlots.get(entry.key);
          if (!taken) {
            let held = await storage.scan(keys.queueKeySlotPrefix(queue.name, entry.key));
            // The poll's backstop, as for the queue's slots: a full key whose holders ended frees them.
            if (
              poll &&
              held.length >= queue.perKeyConcurrency &&
              (await this.#freeStaleSlots(queue, held, entry.key))
            )
              held = await storage.scan(keys.queueKeySlotPrefix(queue.name, entry.key));
            taken = new Set(held.map(({ key: slotKey }) => slotIndex(slotKey)));
            keySlots.set(entry.key, taken);
          }
          // A full key is skipped (later entries of it too): no head-of-line blocking across keys.
          if (taken.size >= queue.perKeyConcurrency) continue;
          let index = 0;
          while (taken.has(index)) index++;
          if (index >= queue.perKeyConcurrency) continue;
          taken.add(index);
          keySlot = { index, expected: null };
        }
        const n = plans.length;
        plans.push({
          entry,
          key,
          value,
          grant: {
            waitKey: key,
            waitRaw: value,
            ...(freeSlots === null ? {} : { slot: { index: freeSlots[n]!, expected: null } }),
            ...(keySlot ? { keySlot } : {}),
            ...(freeTokens === null ? {} : { rate: freeTokens[n]! }),
          },
        });
        room--;
      }
      const outcomes = await Promise.all(
        plans.map((plan) => lifecycle.admitQueued(plan.entry.id, plan.grant)),
      );
      let admitted = 0;
      let raced = false;
      for (const [n, outcome] of outcomes.entries()) {
        const { entry, key, value } = plans[n]!;
        if (outcome === 'admitted') {
          admitted++;
          const here = this.#admittedHere.get(queue.name) ?? new Set<string>();
          here.add(entry.id);
          this.#admittedHere.set(queue.name, here);
        } else if (outcome === 'ineligible') skip.add(entry.id);
        else if (outcome === 'gone') {
          skip.add(entry.id);
          await this.#dropOrphan(entry.id, key, value);
        } else if (outcome === 'raced') raced = true; // another engine took a slot, a token or the workflow
      }
      if (soonest < Infinity) this.#wakeAt(queue.name, soonest);
      if (raced && ++races > 20) return; // a storm of races: the next kick or poll goes on
      if (!raced && admitted === 0) return;
    }
  }

  /**
   * The wait entries of `queue` in admission order: the page already read, then further pages only as far as
   * the caller reads (at most `waitPages`): entries held back by a full key or a later not-before time must not
   * hide the eligible ones behind them.
   */
  async *#waiting(queue: string, first: { key: string; value: string }[]) {
    let page = first;
    for (let pages = 1; ; pages++) {
      yield* page;
      if (page.length < waitPage || pages >= waitPages) return;
      page = await this.#deps.storage.scan(keys.queueWaitPrefix(queue), {
        after: page[page.length - 1]!.key,
        limit: waitPage,
      });
    }
  }

  /**
   * A wait entry whose workflow is no longer waiting in this queue (it can only be left by a workflow
   * record written outside the engine): deleted, conditioned on its text, so it stops heading the queue.
   */
  async #dropOrphan(workflowId: string, key: string, raw: string): Promise<void> {
    const { storage } = this.#deps;
    const recordRaw = await storage.get(keys.record(workflowId));
    let record: WorkflowRecord | null = null;
    try {
      record = recordRaw ? decodeRecord(keys.record(workflowId), recordRaw) : null;
    } catch {
      return; // a corrupt record is reported where it is driven; its entry stays
    }
    if (record && record.status === 'pending' && record.queue) return; // not ours to judge (another version)
    await storage.conditionalBatch(
      [
        { key, expected: raw },
        { key: keys.record(workflowId), expected: recordRaw },
      ],
      [{ type: 'delete', key }],
    );
  }

  /**
   * The backstop against a leak: a slot whose workflow has ended, is gone, or holds another slot (every end
   * frees its slots in its own batch, so only a record written outside the engine leaves one). Frees those,
   * each conditioned on the slot's and the record's text. True when it freed one.
   */
  async #freeStaleSlots(
    queue: QueueDeclaration,
    slots: { key: string; value: string }[],
    /** The concurrency key whose key slots these are (none: the queue's own slots). */
    concurrencyKey?: string,
  ): Promise<boolean> {
    const { storage } = this.#deps;
    const held = slots.map((slot) => ({ ...slot, holder: decodeSlot(slot.value) }));
    const ids = held.map(({ holder }) => holder?.id ?? '');
    const records = await storage.getMany(ids.map((id) => keys.record(id)));
    let freed = false;
    for (const [index, { key, value, holder }] of held.entries()) {
      const raw = records[index] ?? null;
      let record: WorkflowRecord | null = null;
      try {
        record = raw ? decodeRecord(keys.record(ids[index]!), raw) : null;
      } catch {
        continue;
      }
      const holds =
        holder !== null &&
        record !== null &&
        !isTerminal(record.status) &&
        record.queue?.name === queue.name &&
        (concurrencyKey === undefined
          ? record.queue.slot === slotIndex(key)
          : record.queue.key === concurrencyKey && record.queue.keySlot === slotIndex(key));
      if (holds) continue;
      const outcome = await storage.conditionalBatch(
        [{ key, expected: value }, ...(holder ? [{ key: keys.record(holder.id), expected: raw }] : [])],
        [{ type: 'delete', key }],
      );
      if (outcome) {
        freed = true;
        this.#deps.warn({
          name: 'StorageWarning',
          message: `Queue '${queue.name}': ${concurrencyKey === undefined ? '' : `key '${concurrencyKey}' `}slot ${slotIndex(key)} was held by ${holder ? `workflow '${holder.id}', which ${record ? `is ${record.status}` : 'no longer exists'}` : 'an unreadable value'}; it is free again.`,
        });
      }
    }
    return freed;
  }

  /** Every declared queue (and those other engines declared in the store), as `QueueView`s. */
  async list(): Promise<QueueView[]> {
    const stored = await this.#deps.storage.scan(keys.queueDeclarationsPrefix);
    const all = new Map(this.#deps.declarations);
    for (const { key, value } of stored) {
      const name = key.slice(keys.queueDeclarationsPrefix.length);
      if (all.has(name)) continue;
      try {
        all.set(name, JSON.parse(value) as QueueDeclaration);
      } catch {
        // unreadable: not shown
      }
    }
    return Promise.all(
      [...all.values()].sort((a, b) => a.name.localeCompare(b.name)).map((q) => this.#view(q)),
    );
  }

  /** One queue (declared here or by another engine), or null when none of that name is known. */
  async describe(name: string): Promise<QueueView | null> {
    const declaration =
      this.#deps.declarations.get(name) ??
      (await this.#deps.storage.get(keys.queueDeclaration(name)).then((raw) => {
        if (!raw) return null;
        try {
          return JSON.parse(raw) as QueueDeclaration;
        } catch {
          return null;
        }
      }));
    return declaration ? this.#view(declaration) : null;
  }

  async #view(queue: QueueDeclaration): Promise<QueueView> {
    const { storage, clock } = this.#deps;
    const [slots, tokens, waiting, keySlots] = await Promise.all([
      storage.scan(keys.queueSlotPrefix(queue.name)),
      queue.rateLimit === null ? Promise.resolve([]) : storage.scan(keys.queueRatePrefix(queue.name)),
      storage.scan(keys.queueWaitPrefix(queue.name), { limit: countLimit + 1 }),
      storage.scan(keys.queueKeySlotsPrefix(queue.name)),
    ]);
    const now = clock.now();
    const entries = waiting
      .slice(0, countLimit)
      .map(({ value }) => decodeWaitEntry(value))
      .filter((entry): entry is WaitEntry => entry !== null);
    const perKey = new Map<string, { running: number; waiting: number }>();
    for (const { key } of keySlots) {
      const escaped = key.slice(keys.queueKeySlotsPrefix(queue.name).length, key.lastIndexOf(':'));
      const name = unescapeId(escaped);
      const counts = perKey.get(name) ?? { running: 0, waiting: 0 };
      counts.running++;
      perKey.set(name, counts);
    }
    for (const entry of entries)
      if (entry.key !== undefined) {
        const counts = perKey.get(entry.key) ?? { running: 0, waiting: 0 };
        counts.waiting++;
        perKey.set(entry.key, counts);
      }
    let rate: QueueView['rate'] = null;
    if (queue.rateLimit) {
      const { limit, periodMs } = queue.rateLimit;
      const used = tokens
        .map(({ value }) => decodeRateToken(value))
        .filter((token) => token !== null && token.at + periodMs > now) as { at: number }[];
      rate = {
        usedInWindow: used.length,
        nextFreeAt: used.length < limit ? null : Math.min(...used.map((token) => token.at + periodMs)),
      };
    }
    const first = entries[0];
    const oldest = first
      ? await storage
          .get(keys.record(first.id))
          .then((raw) => (raw ? (decodeRecord(keys.record(first.id), raw).queue?.enqueuedAt ?? null) : null))
          .catch(() => null)
      : null;
    return {
      ...queue,
      running: queue.concurrency === null ? null : slots.length,
      slots: slots.flatMap(({ key, value }) => {
        const holder = decodeSlot(value);
        return holder
          ? [{ slot: slotIndex(key), workflowId: holder.id, since: holder.at, admittedBy: holder.by }]
          : [];
      }),
      waiting: entries.length,
      waitingCapped: waiting.length > countLimit,
      next: entries.slice(0, 20).map((entry) => ({
        workflowId: entry.id,
        type: entry.type,
        ...(entry.key === undefined ? {} : { key: entry.key }),
        ...(entry.notBefore === undefined ? {} : { notBefore: entry.notBefore }),
      })),
      oldestEnqueuedAt: oldest,
      rate,
      keys: [...perKey.entries()]
        .map(([key, counts]) => ({ key, ...counts }))
        .sort((a, b) => b.running + b.waiting - (a.running + a.waiting) || a.key.localeCompare(b.key))
        .slice(0, 50),
      drivenHere: this.drivenHere(queue.name),
    };
  }

  /** Where a workflow stands in its queue: waiting (and its position), or admitted; null when not queued. */
  async position(record: WorkflowRecord): Promise<QueuePosition | null> {
    const queue = record.queue;
    if (!queue || isTerminal(record.status)) return null;
    const base = {
      queue: queue.name,
      ...(queue.key === undefined ? {} : { key: queue.key }),
      priority: queue.priority,
      enqueuedAt: queue.enqueuedAt,
      ...(queue.notBefore === undefined ? {} : { notBefore: queue.notBefore }),
    };
    if (record.status !== 'pending')
      return {
        ...base,
        status: 'admitted',
        ...(queue.admittedAt === undefined ? {} : { admittedAt: queue.admittedAt }),
        ...(queue.slot === undefined ? {} : { slot: queue.slot }),
      };
    const ahead = await this.#deps.storage.scan(keys.queueWaitPrefix(queue.name), {
      after: keys.queueWait(queue.name, queue.order, record.id),
      reverse: true,
      limit: countLimit,
    });
    return { ...base, status: 'waiting', position: ahead.length + 1 };
  }
}
