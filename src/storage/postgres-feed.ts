/**
 * The change feed of `PostgresStorage` (`watch`): LISTEN/NOTIFY on a session of its own, backed by the change
 * log table, so that nothing is lost to NOTIFY's 8,000-byte payload limit or to a dropped connection. While
 * that session is free the adapter sends its commits on it, two at most (`withSession`), so that a commit's
 * own notification comes back in its answer.
 *
 * Every commit that writes appends one row (a sequence number and its touched keys) to the change log and
 * notifies the sequence number, followed by the keys when they fit in the payload (see `notified`). The
 * feed keeps `high`, the highest sequence number it has seen, and `missing`, the numbers below `high` it has
 * not seen. A notification with its keys is delivered as it is (no query: the common case), also one that
 * skips numbers (they are still committing, and their own notifications follow) or fills a skipped one;
 * anything else (keys too long for a payload, a notification during a read, a reconnect, the heartbeat)
 * reads the log.
 *
 * Sequence numbers are taken before commit, so they can become visible out of order; a number missing now
 * is either still being committed or was rolled back. Each read of the log is one statement, one snapshot:
 * the rows after `high` or in `missing`, plus the snapshot's xmin and xmax. A number first missed under a
 * snapshot with xmax X belongs to a transaction that took its id before X (the commit function takes an id
 * before the number), so once a later snapshot's xmin reaches X that transaction has ended, and if the row
 * is still absent it never will appear: the number is forgotten.
 *
 * Guarantees (with `ChangeFeed`'s: after the commit is visible, deduplicated per commit, prefix filtered):
 * - Every commit that completes after `watch` was called is reported once, including commits made while the
 *   listening connection was down: on reconnect the feed reads everything after `high` and in `missing`.
 *   A commit that completed just before `watch` was called may also be reported.
 * - If the gap is too old to replay (the log was pruned past it), every key currently stored under each
 *   watched prefix is reported instead; keys deleted during the gap are then not reported.
 * - The feed reconnects with backoff (50 ms doubling to 2 s) and re-reads the log every `heartbeatMs`, which
 *   also notices a connection that died silently.
 */

import { ChangeFeed, type ChangeListener } from './change-feed';
import type { SqlListener, SqlQueryable } from './postgres-driver';
import { decodeKeyHex, decodeNotifiedKey, statements, type SchemaNames } from './postgres-sql';

export type PostgresChangeFeedOptions = {
  queryable: SqlQueryable;
  names: SchemaNames;
  /** How often the log is re-read while connected, in milliseconds. */
  heartbeatMs: number;
  /** Every key stored under `prefix`, page by page: what a too-old gap reports. */
  scanKeys(prefix: string): AsyncIterable<string[]>;
};

/** Rows read per query of the log. */
const pageSize = 1000;
/** How many recent sequence numbers the starting read considers (more than commits can be in flight). */
const startWindow = 1000;
/** Beyond this many missing numbers the feed stops tracking them one by one and rescans instead. */
const maxMissing = 10_000;
/** Most commits on the listening session at once (the engine keeps two in flight; see `withSession`). */
const commitsOnSession = 2;
const firstBackoffMs = 50;
const maxBackoffMs = 2000;

/** A row of the change log: its sequence number and touched keys (hex, comma-separated) when asked for. */
type ChangeRow = [seq: number, keys: string | null];

export class PostgresChangeFeed {
  private readonly feed = new ChangeFeed();
  private readonly prefixes = new Map<string, number>();
  private readonly statementText: ReturnType<typeof statements>;
  private listener: SqlListener | undefined;
  private high = 0;
  /** Missing sequence number → xmax of the snapshot it was first missed under (unknown until a read). */
  private readonly missing = new Map<number, bigint | undefined>();
  private reading: Promise<void> | undefined;
  /** The commits running or queued on the listening session (`withSession`). */
  private readonly lent = new Set<Promise<unknown>>();
  private readAgain = false;
  private closed = false;
  private connecting = false;
  private backoffMs = firstBackoffMs;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  private failureReported = false;

  constructor(private readonly options: PostgresChangeFeedOptions) {
    this.statementText = statements(options.names);
  }

  /** Connects and reads the starting point. Rejects (with the driver's error) if it cannot connect. */
  async start(): Promise<void> {
    const listener = await this.openListener();
    try {
      const [row] = await listener.query(this.statementText.newestChanges, [String(startWindow)]);
      const xmax = BigInt(String(row?.xmax));
      const seqs = JSON.parse(String(row?.seqs ?? '[]')) as number[];
      const present = new Set(seqs);
      const newest = seqs[seqs.length - 1] ?? 0;
      for (let seq = seqs[0] ?? newest; seq < newest; seq++) {
        if (!present.has(seq)) this.missing.set(seq, xmax);
      }
      this.high = newest;
    } catch (error) {
      await listener.close();
      throw error;
    }
    this.listener = listener;
    this.heartbeatTimer = setInterval(() => this.read(), this.options.heartbeatMs);
    this.heartbeatTimer.unref?.();
  }

  subscribe(prefix: string, listener: ChangeListener): () => void {
    const unsubscribe = this.feed.subscribe(prefix, listener);
    this.prefixes.set(prefix, (this.prefixes.get(prefix) ?? 0) + 1);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      unsubscribe();
      const count = (this.prefixes.get(prefix) ?? 1) - 1;
      if (count === 0) this.prefixes.delete(prefix);
      else this.prefixes.set(prefix, count);
    };
  }

  /** Stops listening; listeners are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    this.feed.clear();
    this.prefixes.clear();
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.reconnectTimer);
    await this.reading?.catch(() => undefined);
    await Promise.allSettled(this.lent);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.close();
  }

  /** Reads the log now and resolves once everything visible to that read has been delivered. */
  async sync(): Promise<void> {
    this.read();
    await this.reading;
  }

  /**
   * Runs `run` (a commit) with the listening session when it is up, no read runs on it and fewer than
   * `commitsOnSession` commits are on it; with undefined otherwise (the caller then uses its pool).
   *
   * A commit sent on the session that listens gets its own notification back in its answer: PostgreSQL hands
   * a session the notifications of its own transaction before it reports ready, so no second backend wakes
   * to forward it and this process does not wake a second time to read it (for a lone engine step that was a
   * tenth of its time). The engine keeps two commits in flight; both go here, pipelined (the session writes
   * each statement to the server at once, see `PgQueryable.listen`), so the server commits them back to
   * back, the second the moment the first is committed, while the engine prepares the next — instead of two
   * backends committing side by side, which on two cores contend with each other and with the engine, and
   * queue anyway on NOTIFY's commit lock (PostgreSQL serialises the commits of transactions that notify, disk
   * flush included). Measured: bench/README.md.
   * The feed delivers the notifications as any other; `close()` waits for the commits on the session.
   */
  async withSession<T>(run: (session: SqlListener | undefined) => Promise<T>): Promise<T> {
    const listener = this.listener;
    if (!listener || this.lent.size >= commitsOnSession || this.reading || this.closed) return run(undefined);
    const lent = run(listener);
    this.lent.add(lent);
    try {
      return await lent;
    } finally {
      this.lent.delete(lent);
    }
  }

  /** Whether the listening session is up (for tests and diagnostics). */
  get connected(): boolean {
    return this.listener !== undefined;
  }

  private openListener(): Promise<SqlListener> {
    return this.options.queryable.listen(this.options.names.channel, {
      notify: (payload) => this.notified(payload),
      lost: (error) => this.lost(error),
    });
  }

  private lost(error: unknown): void {
    if (this.closed) return;
    const listener = this.listener;
    this.listener = undefined;
    listener?.close().catch(() => undefined);
    this.report(error);
    this.scheduleReconnect();
  }

  private report(error: unknown): void {
    if (this.failureReported) return;
    this.failureReported = true;
    const reason = error instanceof Error ? error.message : String(error);
    console.warn(
      `Shuttle PostgresStorage (${this.options.queryable.description}, schema ${this.options.names.schema}): ` +
        `the change feed lost its connection (${reason}); reconnecting, and missed changes will be reported.`,
    );
  }

  private scheduleReconnect(): void {
    if (this.closed || this.connecting || this.reconnectTimer !== undefined) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, maxBackoffMs);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.reconnect();
    }, delay);
    this.reconnectTimer.unref?.(); // reconnecting alone does not keep the process alive
  }

  private async reconnect(): Promise<void> {
    if (this.closed || this.listener) return;
    this.connecting = true;
    let listener: SqlListener | undefined;
    try {
      listener = await this.openListener();
    } catch {
      // Still unreachable: try again later.
    } finally {
      this.connecting = false;
    }
    if (!listener) {
      this.scheduleReconnect();
      return;
    }
    if (this.closed) {
      await listener.close();
      return;
    }
    this.listener = listener;
    this.read(); // everything committed while the connection was down
  }

  /**
   * A notification: `seq` alone, `seq keyHex,keyHex,…` (the commit function's), or `seq<tab>key,key,…` with
   * keys as `notifiedKey` names them (the append statement's). In the common case (keys included, no read
   * running) it is delivered straight from the payload, in order or not; anything else reads the log.
   */
  private notified(payload: string): void {
    // Before the starting read (or while reconnecting) `high` is not known yet; the read that follows will
    // find this change in the log.
    if (!this.listener) return;
    const separator = /[ \t]/.exec(payload);
    const space = separator ? separator.index : -1;
    const seq = Number(space < 0 ? payload : payload.slice(0, space));
    if (space < 0 || !Number.isSafeInteger(seq) || this.reading || seq - this.high > maxMissing) {
      this.read();
      return;
    }
    if (seq <= this.high && !this.missing.has(seq)) return; // already delivered
    for (let skipped = this.high + 1; skipped < seq; skipped++) this.missing.set(skipped, undefined);
    this.missing.delete(seq);
    this.high = Math.max(this.high, seq);
    if (this.prefixes.size > 0) {
      const keys = payload.slice(space + 1);
      const decode = separator![0] === ' ' ? decodeKeyHex : decodeNotifiedKey;
      this.feed.publish(keys === '' ? [] : keys.split(',').map(decode));
    }
    // A skipped number is not read for: numbers are drawn before commit and notifications come in commit
    // order, so two commits in flight often notify out of order, and the skipped one's own notification
    // delivers it when it commits (or a read, if it comes while one runs or without its keys). Only a
    // number whose transaction rolled back never comes; the heartbeat's read forgets it.
  }

  /** Reads the log now, or again right after the read in progress. */
  private read(): void {
    if (this.closed) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        const listener = this.listener;
        if (!listener) return;
        try {
          await this.readPages(listener);
          this.backoffMs = firstBackoffMs;
          this.failureReported = false;
        } catch (error) {
          if (this.listener === listener) this.lost(error);
          return;
        }
      } while (this.readAgain && !this.closed);
    })().finally(() => {
      this.reading = undefined;
    });
  }

  private async readPages(listener: SqlListener): Promise<void> {
    let full = true;
    while (full && !this.closed) {
      const withKeys = this.prefixes.size > 0;
      const [row] = await listener.query(
        this.statementText.changes,
        [String(this.high), [...this.missing.keys()].join(','), String(pageSize), String(withKeys)],
        `${this.options.names.schema}:changes`,
      );
      if (this.closed) return;
      const changes = JSON.parse(String(row?.changes ?? '[]')) as ChangeRow[];
      full = changes.length === pageSize;
      const lostSome = this.apply(
        changes,
        !full,
        BigInt(String(row?.xmin)),
        BigInt(String(row?.xmax)),
        Number(row?.pruned_through ?? 0),
        withKeys,
      );
      if (lostSome && withKeys) await this.rescan();
    }
  }

  /**
   * Delivers a page of the log and updates `high` and `missing`; true if changes may have been lost.
   * `complete`: the page holds every row asked for (it was not cut by the page size), so a missing number
   * absent from it is absent from the log.
   */
  private apply(
    changes: ChangeRow[],
    complete: boolean,
    xmin: bigint,
    xmax: bigint,
    prunedThrough: number,
    withKeys: boolean,
  ): boolean {
    let lostSome = prunedThrough > this.high;
    for (const seq of this.missing.keys()) {
      if (seq <= prunedThrough) {
        lostSome = true;
        this.missing.delete(seq);
      }
    }
    const seen = new Set<number>();
    let newest = this.high;
    for (const [seq, keys] of changes) {
      seen.add(seq);
      if (seq <= this.high && !this.missing.delete(seq)) continue; // already delivered
      if (withKeys && keys) this.feed.publish(keys.split(',').map(decodeKeyHex));
      newest = Math.max(newest, seq);
    }
    if (complete) {
      for (const [seq, firstMissedUnder] of this.missing) {
        if (firstMissedUnder === undefined) this.missing.set(seq, xmax);
        else if (xmin >= firstMissedUnder) this.missing.delete(seq); // its transaction ended without the row
      }
    }
    // Numbers skipped over by this page: not visible yet, or never will be.
    for (let seq = Math.max(this.high, prunedThrough) + 1; seq < newest; seq++) {
      if (!seen.has(seq)) this.missing.set(seq, xmax);
      if (this.missing.size > maxMissing) {
        this.missing.clear();
        lostSome = true;
        break;
      }
    }
    this.high = Math.max(newest, prunedThrough);
    return lostSome;
  }

  /** Reports every key under every watched prefix (after a gap too old to replay). */
  private async rescan(): Promise<void> {
    const prefixes = [...this.prefixes.keys()];
    const covering = prefixes.filter(
      (prefix) => !prefixes.some((other) => other !== prefix && prefix.startsWith(other)),
    );
    for (const prefix of covering) {
      for await (const keys of this.options.scanKeys(prefix)) {
        if (this.closed) return;
        this.feed.publish(keys);
      }
    }
  }
}
