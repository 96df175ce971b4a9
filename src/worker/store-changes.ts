/**
 * Store change notices: turns the raw keys the storage change feed reports (commits by any tab) into
 * `store-changed` pushes that say which kinds of data and which workflows changed, coalesced so the page gets
 * at most one notice per flush however many commits landed.
 *
 * The classification mirrors the engine's key layout (src/engine/keys.ts, which is not public API): a key
 * with an unknown prefix is reported as area `other`, never dropped, so a layout change makes the page
 * refetch too much rather than too little. Workflow ids inside keys are unescaped as the engine escapes them
 * (`%3A` → `:`, `%25` → `%`).
 */
import type { PushMessage, StoreArea } from './protocol';
import { PROTOCOL_VERSION } from './protocol';
import { presencePrefix } from './presence';

/**
 * Key prefixes, each with its area and where the workflow id sits: `id` — the id follows the prefix;
 * `skip` — the id follows one more `:`-separated field (status index, timers); `none` — not per workflow.
 */
const layout: readonly { prefix: string; area: StoreArea; id: 'id' | 'skip' | 'none' }[] = [
  { prefix: 'wf:', area: 'workflows', id: 'id' },
  { prefix: 'wf-ckpt:', area: 'workflows', id: 'id' },
  { prefix: 'wf-idx:', area: 'workflows', id: 'skip' },
  { prefix: 'wf-hist:', area: 'workflows', id: 'id' },
  { prefix: 'wf-tl:', area: 'timelines', id: 'id' },
  { prefix: 'wf-owner-holder:', area: 'claims', id: 'id' },
  { prefix: 'wf-owner-epoch:', area: 'claims', id: 'id' },
  { prefix: 'sig:', area: 'messages', id: 'id' },
  { prefix: 'sig-next:', area: 'messages', id: 'id' },
  { prefix: 'cancel:', area: 'messages', id: 'id' },
  { prefix: 'upd:', area: 'messages', id: 'id' },
  { prefix: 'upr:', area: 'messages', id: 'id' },
  { prefix: 'timer:', area: 'timers', id: 'skip' },
  { prefix: 'fence-reject:', area: 'fence-rejections', id: 'id' },
  { prefix: presencePrefix, area: 'engines', id: 'none' },
  { prefix: 'studio:', area: 'engines', id: 'none' },
  { prefix: 'def:', area: 'definitions', id: 'none' },
];

function unescapeId(escaped: string): string {
  return escaped.replace(/%3A/g, ':').replace(/%25/g, '%');
}

/** The area of a stored key and, for per-workflow keys, the workflow id. */
export function classifyKey(key: string): { area: StoreArea; workflowId: string | null } {
  for (const { prefix, area, id } of layout) {
    if (!key.startsWith(prefix)) continue;
    if (id === 'none') return { area, workflowId: null };
    const fields = key.slice(prefix.length).split(':');
    const escaped = id === 'id' ? fields[0] : fields[1];
    return { area, workflowId: escaped ? unescapeId(escaped) : null };
  }
  return { area: 'other', workflowId: null };
}

/** Options of `StoreChangeCoalescer`. */
export type StoreChangeCoalescerOptions = {
  /** Above this many changed workflows a notice says "many" (`workflowIds: null`). Default 200. */
  maxWorkflowIds?: number;
};

/** Accumulates changed keys between flushes. */
export class StoreChangeCoalescer {
  readonly #maxWorkflowIds: number;
  #areas = new Set<StoreArea>();
  #workflowIds: Set<string> | null = new Set();

  constructor(options: StoreChangeCoalescerOptions = {}) {
    this.#maxWorkflowIds = options.maxWorkflowIds ?? 200;
  }

  get isEmpty(): boolean {
    return this.#areas.size === 0;
  }

  add(keys: readonly string[]): void {
    for (const key of keys) {
      const { area, workflowId } = classifyKey(key);
      this.#areas.add(area);
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
