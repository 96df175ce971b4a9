/**
 * Store change notices: turns the raw keys the storage change feed reports (commits by any tab) into
 * `store-changed` pushes that say which kinds of data and which workflows changed, coalesced so the page gets
 * at most one notice per flush however many commits landed.
 *
 * Keys are classified by the engine's own `describeStoredKey`, so the studio never copies the engine's key
 * layout. A kind this module does not know (a newer engine) is reported as area `other`, never dropped, so a
 * layout change makes the page refetch too much rather than too little.
 */
import { describeStoredKey, type StoredKeyKind } from '../engine';
import type { PushMessage, StoreArea } from '../protocol';
import { PROTOCOL_VERSION } from '../protocol';

/** Host keys of the studio itself (the engine label counter): reported with the engines. */
const studioKeyPrefix = 'studio:';

const areaOfKind: Readonly<Record<StoredKeyKind, StoreArea>> = {
  record: 'workflows',
  'past-run': 'workflows',
  purge: 'workflows',
  idempotency: 'workflows',
  'activity-completion': 'messages',
  // Shown with the pending operation (describe), like buffered signals.
  'activity-heartbeat': 'messages',
  // An activity concurrency slot taken or given back: engine-level state, like a session.
  'activity-slot': 'engines',
  checkpoint: 'workflows',
  'status-index': 'workflows',
  'attribute-index': 'workflows',
  history: 'workflows',
  timeline: 'timelines',
  signal: 'messages',
  'cancel-request': 'messages',
  'update-request': 'messages',
  'update-response': 'messages',
  timer: 'timers',
  'claim-holder': 'claims',
  'claim-epoch': 'claims',
  // A session renewal changes no claim, only when the claims of its engine expire: lists need not refetch.
  'claim-session': 'sessions',
  // A displaced engine's notice: the displacing transition's own keys already say what changed.
  'claim-notice': 'claims',
  lease: 'claims',
  'mode-marker': 'other',
  'fence-rejection': 'fence-rejections',
  engine: 'engines',
  definition: 'definitions',
  schedule: 'schedules',
  'schedule-due': 'schedules',
  // A queue's wait entries, slots and rate tokens (an admission also writes the workflow's record).
  queue: 'queues',
  other: 'other',
};

/**
 * The areas a stored key's change touches and, for per-workflow keys, the workflow id. A commit record is in
 * its workflow's timeline and also moves the workflow: a run's step carries its checkpoint in its commit
 * record and writes nothing else of the workflow (src/engine/checkpoint.ts), so its list row and page change.
 */
export function classifyKey(key: string): { areas: StoreArea[]; workflowId: string | null } {
  const { kind, workflowId } = describeStoredKey(key);
  if (kind === 'other' && key.startsWith(studioKeyPrefix)) return { areas: ['engines'], workflowId: null };
  if (kind === 'timeline') return { areas: ['timelines', 'workflows'], workflowId };
  return { areas: [areaOfKind[kind] ?? 'other'], workflowId };
}

/** Options of `StoreChangeCoalescer`. */
export type StoreChangeCoalescerOptions = {
  /** Above this many changed workflows a notice says "many" (`workflowIds: null`). Default 1,000 (what a page patches by id in one read: `list({ ids })`). */
  maxWorkflowIds?: number;
};

/** Accumulates changed keys between flushes. */
export class StoreChangeCoalescer {
  readonly #maxWorkflowIds: number;
  #areas = new Set<StoreArea>();
  #workflowIds: Set<string> | null = new Set();

  constructor(options: StoreChangeCoalescerOptions = {}) {
    this.#maxWorkflowIds = options.maxWorkflowIds ?? 1000;
  }

  get isEmpty(): boolean {
    return this.#areas.size === 0;
  }

  add(keys: readonly string[]): void {
    for (const key of keys) {
      const { areas, workflowId } = classifyKey(key);
      for (const area of areas) this.#areas.add(area);
      if (workflowId === null || this.#workflowIds === null) continue;
      this.#workflowIds.add(workflowId);
      if (this.#workflowIds.size > this.#maxWorkflowIds) this.#workflowIds = null;
    }
  }

  /** The notice for everything added since the last flush, or null when nothing was; then starts afresh. */
  flush(): Extract<PushMessage, { kind: 'store-changed' }> | null {
    if (this.#areas.size === 0) return null;
    const notice = {
      kind: 'store-changed' as const,
      v: PROTOCOL_VERSION,
      areas: [...this.#areas].sort(),
      workflowIds: this.#workflowIds ? [...this.#workflowIds] : null,
    };
    this.#areas = new Set();
    this.#workflowIds = new Set();
    return notice;
  }
}
