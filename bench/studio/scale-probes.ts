/**
 * What the scale benchmark installs inside the browser, without any hook in the studio's code: every
 * function here is serialised by Playwright and run in a page or in a tab's engine worker, so each must be
 * self-contained (no imports, no closures over this module).
 *
 * - `installStorageCounters` (in an engine worker): wraps the IndexedDB prototypes of that worker's global
 *   scope so every request it issues, and every transaction those requests run in, is counted — the storage cost of
 *   everything the worker does (the engine's passes, the studio's queries, presence, the change feed), read
 *   with `readStorageCounters`. Counting only adds a counter increment per call.
 * - `observeStartup` (an init script of a page): records `performance.now()` — ms since navigation start —
 *   when the shell first says the tab's engine is `running` and when the first workflow row is shown.
 */

/** The counters of one worker's IndexedDB use since `installStorageCounters`. */
export type StorageCounters = {
  /** Transactions that issued at least one request. */
  transactions: number;
  readonlyTransactions: number;
  readwriteTransactions: number;
  /** Requests issued on object stores, indexes and cursors (each `get`, `put`, `getAll`, `continue`…). */
  requests: number;
  /** Rows returned by `getAll` / `getAllKeys` requests. */
  rowsRead: number;
  /** Time from a transaction's first request to its completion (or abort), summed, in ms. */
  readonlyTransactionMs: number;
  readwriteTransactionMs: number;
  /** Requests by `store.get`, `store.getAll`, `cursor.continue`… */
  byMethod: Record<string, number>;
};

/**
 * Installs the counters in the current global scope (an engine worker); idempotent. Returns false when they
 * were already installed.
 */
export function installStorageCounters(): boolean {
  type Scope = typeof globalThis & { __shuttleStorageCounters?: StorageCounters };
  const scope = globalThis as Scope;
  if (scope.__shuttleStorageCounters) return false;
  const counters: StorageCounters = {
    transactions: 0,
    readonlyTransactions: 0,
    readwriteTransactions: 0,
    requests: 0,
    rowsRead: 0,
    readonlyTransactionMs: 0,
    readwriteTransactionMs: 0,
    byMethod: {},
  };
  scope.__shuttleStorageCounters = counters;
  // Transactions are counted from the requests they carry (Dexie keeps a bound `IDBDatabase.transaction`
  // from before the counters existed): a transaction is counted when its first request is issued, and timed
  // from then to its completion.
  const seen = new WeakSet<IDBTransaction>();
  const noteTransaction = (transaction: IDBTransaction | null | undefined) => {
    if (!transaction || seen.has(transaction)) return;
    seen.add(transaction);
    const readwrite = transaction.mode !== 'readonly';
    counters.transactions++;
    if (readwrite) counters.readwriteTransactions++;
    else counters.readonlyTransactions++;
    const openedAt = performance.now();
    const finished = () => {
      const ms = performance.now() - openedAt;
      if (readwrite) counters.readwriteTransactionMs += ms;
      else counters.readonlyTransactionMs += ms;
    };
    transaction.addEventListener('complete', finished);
    transaction.addEventListener('abort', finished);
  };
  const wrap = (prototype: object, label: string, names: readonly string[]) => {
    const target = prototype as Record<string, unknown>;
    for (const name of names) {
      const original = target[name];
      if (typeof original !== 'function') continue;
      const key = `${label}.${name}`;
      const counted = name === 'getAll' || name === 'getAllKeys';
      target[name] = function (this: unknown, ...args: unknown[]) {
        counters.requests++;
        counters.byMethod[key] = (counters.byMethod[key] ?? 0) + 1;
        if (this instanceof IDBObjectStore) noteTransaction(this.transaction);
        else if (this instanceof IDBIndex) noteTransaction(this.objectStore.transaction);
        const request = (original as (...values: unknown[]) => unknown).apply(this, args);
        if (counted && request instanceof IDBRequest)
          request.addEventListener('success', () => {
            if (Array.isArray(request.result)) counters.rowsRead += request.result.length;
          });
        return request;
      };
    }
  };
  const storeMethods = [
    'get',
    'getKey',
    'getAll',
    'getAllKeys',
    'put',
    'add',
    'delete',
    'clear',
    'count',
    'openCursor',
    'openKeyCursor',
  ];
  wrap(IDBObjectStore.prototype, 'store', storeMethods);
  wrap(IDBIndex.prototype, 'index', [
    'get',
    'getKey',
    'getAll',
    'getAllKeys',
    'count',
    'openCursor',
    'openKeyCursor',
  ]);
  wrap(IDBCursor.prototype, 'cursor', ['continue', 'advance', 'continuePrimaryKey']);
  return true;
}

/** A copy of the counters of the current global scope, or null when they are not installed. */
export function readStorageCounters(): StorageCounters | null {
  const counters = (globalThis as typeof globalThis & { __shuttleStorageCounters?: StorageCounters })
    .__shuttleStorageCounters;
  return counters ? { ...counters, byMethod: { ...counters.byMethod } } : null;
}

/** When the shell first showed the engine running and the first workflow row, in ms since navigation. */
export type StartupMarks = { engineRunningMs: number | null; firstRowsMs: number | null };

/** Init script of a page: records `StartupMarks` in `window.__shuttleStartupMarks` as the DOM changes. */
export function observeStartup(): void {
  const marks: StartupMarks = { engineRunningMs: null, firstRowsMs: null };
  (window as unknown as { __shuttleStartupMarks: StartupMarks }).__shuttleStartupMarks = marks;
  const check = () => {
    if (
      marks.engineRunningMs === null &&
      document.querySelector('[data-testid="shell.engine-status"][data-state="running"]')
    )
      marks.engineRunningMs = performance.now();
    if (marks.firstRowsMs === null && document.querySelector('[data-testid="workflows.row"]'))
      marks.firstRowsMs = performance.now();
    if (marks.engineRunningMs !== null && marks.firstRowsMs !== null) observer.disconnect();
  };
  const observer = new MutationObserver(check);
  observer.observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['data-state'],
  });
}

/** The marks `observeStartup` recorded so far. */
export function readStartupMarks(): StartupMarks | null {
  return (window as unknown as { __shuttleStartupMarks?: StartupMarks }).__shuttleStartupMarks ?? null;
}

/** Calls of the page's `window.shuttle` client by method, since `installClientCounters`. */
export type ClientCounters = Record<string, number>;

/**
 * Counts the calls made on the page's client (`window.shuttle`, the very object the studio's queries use),
 * by method: which views ask the worker for what, and how often. The benchmark's own calls through
 * `window.shuttle` are counted too. Idempotent.
 */
export function installClientCounters(): boolean {
  type Counted = { __shuttleClientCounters?: ClientCounters };
  const client = (window as unknown as { shuttle?: Record<string, unknown> & Counted }).shuttle;
  if (!client || client.__shuttleClientCounters) return false;
  const counters: ClientCounters = {};
  client.__shuttleClientCounters = counters;
  const methods = [
    'list',
    'describe',
    'timeline',
    'claims',
    'engines',
    'ownedWorkflows',
    'metrics',
    'fenceRejections',
    'resultWaiters',
    'definitions',
    'start',
  ];
  for (const name of methods) {
    const original = client[name];
    if (typeof original !== 'function') continue;
    client[name] = (...args: unknown[]) => {
      counters[name] = (counters[name] ?? 0) + 1;
      return (original as (...values: unknown[]) => unknown).apply(client, args);
    };
  }
  return true;
}

/** A copy of the page's client call counters, or null when they are not installed. */
export function readClientCounters(): ClientCounters | null {
  const client = (window as unknown as { shuttle?: { __shuttleClientCounters?: ClientCounters } }).shuttle;
  return client?.__shuttleClientCounters ? { ...client.__shuttleClientCounters } : null;
}
