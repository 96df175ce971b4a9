/**
 * The simulation's audited store (ownership scenario 28; docs/ownership.md): it sees every write that lands on
 * the shared store, in the order it lands, and checks as it goes:
 *
 * - each replay-history slot and timeline slot (commit record) is written once and never rewritten, and only
 *   deleted, or made a tombstone, by a purge of its run (its purge marker lists the run); a tombstone is never
 *   deleted or rewritten;
 * - every write that replaces a checkpoint of a run — stored, or carried by a commit record (checkpoint.ts) —
 *   appends the commit record the checkpoint it replaces names (what makes a run's commit, conditioned on that
 *   record's absence, a fenced write: workflow-writes.ts);
 * - every epoch's timeline entries came from one engine, and epoch keys only rose (never deleted);
 * - no terminal record was ever overwritten;
 * - a workflow record, or an earlier run kept by run history, is deleted only by a purge, and a purge only
 *   deletes a finished workflow;
 * - nothing of a purged workflow or of a purged earlier run is written after the purge — no late owner
 *   resurrects it — but the record of a late owner's refused write (the engine keeps that diagnostic);
 * - every start by a schedule commits with its schedule's record, which was not paused, and each slot of a
 *   schedule is started once (its workflow id is the slot's);
 * - an idempotency key, once written, is never rewritten or deleted (the simulation is far shorter than the
 *   key's window);
 * - every takeover took the claim from an engine that was gone by what the scheduler knows: it crashed (the
 *   liveness oracle reports it), or its session — as the audit saw it land — had ended, was absent or had
 *   lapsed past its grace at some moment within two renew intervals before the takeover (the taker judged
 *   by the sessions it read at the start of its pass). A live holder taken over is a safety violation even
 *   when the fence then keeps every write in order.
 *
 * It also keeps what the end-of-run checks need: every workflow creation (id, run, scheduled slot, the
 * idempotency key written with it) and every purge (whole workflows and earlier runs).
 *
 * The checks read a shadow of the store that the audit builds from the writes it has seen land, so it must
 * see them in the order the store applied them. An acknowledgement is not that order: over PostgreSQL two
 * engines' commits travel on different connections, and the answer to the earlier commit can reach this
 * process after a later one that depends on it (its backend descheduled between making the commit visible
 * and sending the answer, on a loaded machine). Seen in the order of their answers, a checkpoint replaced
 * twice looks replaced without its commit record, and an epoch raised twice looks lowered. So a write waits
 * until every earlier write sharing a key with it (condition or operation) has been answered and audited:
 * writes that share a key are applied and audited in the order they reached the audit, and writes that share
 * none commute, so any order of theirs is one the store could have had. The store serialises writes sharing
 * a key anyway (PostgreSQL locks every key of a commit), so this adds only the round trip. Writes on one
 * workflow's log or checkpoint count as sharing a key: a commit that builds on another read it, so it reached
 * the audit after it. MemoryStorage
 * applies a call as it is made and answers in call order, so there a write waits only when it is made in the
 * microtasks between an earlier one's answer and its audit.
 */
import type { CommitGroup, Condition, Operation, ScanOptions, Storage } from '../../storage/types';
import { describeStoredKey, keys, unescapeId, type StoredKeyKind } from '../keys';
import {
  decodeLogRecord,
  decodeTimelineRecord,
  isTerminal,
  type Checkpoint,
  type WorkflowRecord,
} from '../records';
import type { ScheduleRecord } from '../schedules/records';
import { slotWorkflowId } from '../schedules/schedules';
import { decodeTombstone } from '../purge';
import { commitRecordKey } from '../workflow-writes';

/** One creation of a workflow run, as it landed. */
export type Creation = {
  workflowId: string;
  run: number;
  type: string;
  scheduledBy?: WorkflowRecord['scheduledBy'];
  /** The idempotency key written in the same batch (its raw `idem:` key), if any. */
  idempotencyKey?: string;
};

/** A landed operation with what its key holds. */
type Landed = { operation: Operation; kind: StoredKeyKind; workflowId: string | null };

/**
 * What may be written of a workflow after its purge: the purge's own marker, and the record of a late owner's
 * refused write (a diagnostic the engine keeps on purpose: purge.test.ts). Its epoch is never written again.
 */
const afterPurge: ReadonlySet<StoredKeyKind> = new Set(['purge', 'fence-rejection']);

/** The run number in a `wf-tl:`, `wf-hist:` or `wf-run:` key (`<prefix><id>:<run>…`). */
function runOf(key: string): number {
  const rest = key.slice(key.indexOf(':') + 1).split(':');
  return Number(rest[1]);
}

export class AuditedStorage implements Storage {
  readonly capabilities: Storage['capabilities'];
  readonly violations: string[] = [];
  /** Every creation of a run, in the order they landed. */
  readonly creations: Creation[] = [];
  /** Workflows purged whole, and earlier runs purged alone (`<id>#<run>`). */
  readonly purgedWorkflows = new Set<string>();
  readonly purgedRuns = new Set<string>();
  readonly #shadow = new Map<string, string>();
  readonly #epochOwners = new Map<string, string>();
  readonly #slots = new Map<string, string>();
  /** Per workflow, its current checkpoint as the audit has seen it land (`#checkpointsAppend`). */
  readonly #heads = new Map<string, Checkpoint>();
  /** Workflows with an earlier run purged alone. */
  readonly #runsPurgedOf = new Set<string>();
  /** Per key, the turn of the last write touching it that has not yet been answered and audited. */
  readonly #turns = new Map<string, Promise<void>>();
  readonly watch?: Storage['watch'];
  readonly syncWatchers?: Storage['syncWatchers'];
  /**
   * What the takeover check needs from the simulation: the clock, whether an engine is gone to the liveness
   * oracle (crashed), and the grace and renew interval the engines run with. Unset: no takeover check.
   */
  takeovers: {
    now: () => number;
    isGone: (engineId: string) => boolean;
    graceMs: number;
    renewIntervalMs: number;
  } | null = null;
  /**
   * Called with every write that lands, in the order the audit applies them (after its own checks): what
   * another audit (the queue simulation's) needs to follow the store write by write.
   */
  onLanded: ((operations: readonly Operation[]) => void) | null = null;
  /** Per engine, its session records in the order they landed: when, and what they said (null: deleted). */
  readonly #sessions = new Map<
    string,
    { at: number; expiresAt: number; endedAt?: number; gone: boolean }[]
  >();

  constructor(private readonly inner: Storage) {
    this.capabilities = inner.capabilities;
    if (inner.watch) this.watch = (prefix, listener) => inner.watch!(prefix, listener);
    if (inner.syncWatchers) this.syncWatchers = () => inner.syncWatchers!();
  }

  get(key: string) {
    return this.inner.get(key);
  }
  getMany(keys: readonly string[]) {
    return this.inner.getMany(keys);
  }
  scan(prefix: string, options?: ScanOptions) {
    return this.inner.scan(prefix, options);
  }
  async batch(operations: readonly Operation[]) {
    const turn = this.#turn([{ conditions: [], operations }]);
    try {
      if (turn.after) await turn.after;
      await this.inner.batch(operations);
      this.#landed(operations);
    } finally {
      turn.done();
    }
  }
  async conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    const turn = this.#turn([{ conditions, operations }]);
    try {
      if (turn.after) await turn.after;
      const ok = await this.inner.conditionalBatch(conditions, operations);
      if (ok) this.#landed(operations);
      return ok;
    } finally {
      turn.done();
    }
  }
  async commitGroups(groups: readonly CommitGroup[]) {
    const turn = this.#turn(groups);
    try {
      if (turn.after) await turn.after;
      const results = await this.inner.commitGroups!(groups);
      groups.forEach((group, index) => results[index] && this.#landed(group.operations));
      return results;
    } finally {
      turn.done();
    }
  }
  close() {
    return this.inner.close();
  }

  /**
   * A write's turn (see the module header): `after` settles once every earlier write sharing a key with it
   * has been answered and audited (absent when none is still in flight: the write goes at once, as it would
   * without the audit); `done` ends the turn, answered or not.
   */
  #turn(groups: readonly CommitGroup[]): { after: Promise<unknown> | null; done: () => void } {
    const touched = new Set<string>();
    const touch = (key: string) => {
      touched.add(key);
      // A run's commits share no key with the one before (each appends its own record), yet they replace
      // the checkpoint one after another: every write on a workflow's log or checkpoint takes its turn.
      const { kind, workflowId } = describeStoredKey(key);
      if (kind === 'timeline' || kind === 'checkpoint') touched.add(`chain of ${workflowId}`);
    };
    for (const { conditions, operations } of groups) {
      for (const { key } of conditions) touch(key);
      for (const { key } of operations) touch(key);
    }
    const earlier = new Set<Promise<void>>();
    let done!: () => void;
    const turn = new Promise<void>((resolve) => (done = resolve));
    for (const key of touched) {
      const previous = this.#turns.get(key);
      if (previous) earlier.add(previous);
      this.#turns.set(key, turn);
    }
    return {
      after: earlier.size === 0 ? null : Promise.all(earlier),
      done: () => {
        for (const key of touched) if (this.#turns.get(key) === turn) this.#turns.delete(key);
        done();
      },
    };
  }

  #sessionLanded(key: string, value: string | null) {
    const at = this.takeovers?.now();
    if (at === undefined) return;
    const engineId = unescapeId(key.slice(keys.sessionsPrefix.length));
    const session = value === null ? null : (JSON.parse(value) as { expiresAt: number; endedAt?: number });
    const list = this.#sessions.get(engineId) ?? [];
    list.push(
      session
        ? {
            at,
            expiresAt: session.expiresAt,
            ...(session.endedAt !== undefined ? { endedAt: session.endedAt } : {}),
            gone: false,
          }
        : { at, expiresAt: 0, gone: true },
    );
    this.#sessions.set(engineId, list);
  }

  /** A takeover from a holder that was live by everything the simulation knows is a violation. */
  #checkTakeover(
    workflowId: string,
    at: number,
    detail: {
      fromEngineId: string | null;
      toEngineId: string;
      reason: string;
      fromEpoch: number;
      toEpoch: number;
    },
  ) {
    const judge = this.takeovers;
    const from = detail.fromEngineId;
    if (!judge || from === null || from === detail.toEngineId || judge.isGone(from)) return;
    // Was the holder's session ended, absent or lapsed at some moment in [at − window, at]?
    const window = 2 * judge.renewIntervalMs;
    const versions = this.#sessions.get(from) ?? [];
    const notLive = versions.some((version, index) => {
      const until = Math.min(versions[index + 1]?.at ?? at, at);
      if (until < at - window) return false; // superseded before the window
      if (version.gone || version.endedAt !== undefined) return true;
      return until > version.expiresAt + judge.graceMs; // it lapsed before the next version landed
    });
    if (versions.length === 0 || notLive) return;
    this.#violate(
      `${detail.toEngineId} took ${workflowId} over from ${from} (epoch ${detail.fromEpoch} → ${detail.toEpoch}, reason '${detail.reason}') at ${at}, but ${from} was live: it had not crashed, and its session was renewed to ${versions.at(-1)!.expiresAt} (grace ${judge.graceMs} ms); its sessions: ${versions
        .slice(-4)
        .map(
          (v) =>
            `[landed ${v.at}: ${v.gone ? 'deleted' : `expires ${v.expiresAt}${v.endedAt !== undefined ? ' ended' : ''}`}]`,
        )
        .join(' ')}`,
    );
  }

  #violate(message: string) {
    if (this.violations.length < 50) this.violations.push(message);
  }

  /** The runs a purge marker of `workflowId` lists now (their logs may be deleted). */
  #purging(workflowId: string): number[] {
    const raw = this.#shadow.get(keys.purge(workflowId));
    return raw === undefined ? [] : ((JSON.parse(raw) as { runs: number[] }).runs ?? []);
  }

  #landed(operations: readonly Operation[]) {
    this.#audit(operations);
    this.onLanded?.(operations);
  }

  #audit(operations: readonly Operation[]) {
    const landed: Landed[] = operations.map((operation) => ({
      operation,
      ...describeStoredKey(operation.key),
    }));
    this.#checkpointsAppend(landed);
    this.#purges(landed);
    this.#lateWrites(landed);
    this.#creations(landed);
    for (const { operation, kind, workflowId } of landed) {
      const { key } = operation;
      const written = kind === 'history' || kind === 'timeline';
      const previous = this.#shadow.get(key);
      const purging = written && this.#purging(workflowId ?? '?').includes(runOf(key));
      if (operation.type === 'delete') {
        if (kind === 'claim-session') this.#sessionLanded(key, null);
        if (kind === 'claim-epoch') this.#violate(`epoch key ${key} was deleted`);
        if (written && !purging) this.#violate(`${key} was deleted outside a purge of its run`);
        if (written && previous !== undefined && decodeTombstone(previous) !== undefined)
          this.#violate(`the tombstone ${key} was deleted`);
        if (kind === 'idempotency' && previous !== undefined)
          this.#violate(`idempotency key ${key} was deleted within its window`);
        this.#shadow.delete(key);
        continue;
      }
      const value = operation.value;
      if (written && decodeTombstone(value) !== undefined) {
        // A purge makes a record that opened an epoch a tombstone: only an existing record, only in its purge.
        if (!purging || previous === undefined || decodeTombstone(previous) !== undefined)
          this.#violate(`${key} was made a tombstone outside a purge of its run, or twice`);
        this.#shadow.set(key, value);
        continue;
      }
      if (kind === 'claim-epoch' && previous !== undefined && !(Number(value) > Number(previous)))
        this.#violate(`epoch ${key} went from ${previous} to ${value}`);
      if (written && previous !== undefined && previous !== value)
        this.#violate(`${key} was rewritten:\n  was ${previous}\n  now ${value}`);
      if (kind === 'idempotency' && previous !== undefined && previous !== value)
        this.#violate(`idempotency key ${key} was rewritten: was ${previous}, now ${value}`);
      if (kind === 'record' && previous !== undefined && previous !== value) {
        const before = JSON.parse(previous) as WorkflowRecord;
        const after = JSON.parse(value) as WorkflowRecord;
        if (isTerminal(before.status) && after.run === before.run)
          this.#violate(`terminal record ${key} (${before.status}) was overwritten with ${after.status}`);
      }
      if (kind === 'claim-session') this.#sessionLanded(key, value);
      if (kind === 'timeline')
        for (const entry of decodeTimelineRecord(key, value)) {
          if (entry.kind === 'claim-taken-over')
            this.#checkTakeover(workflowId ?? '?', entry.at, entry.detail);
          const workflow = workflowId ?? '?';
          if (entry.epoch > 0) {
            const owner = this.#epochOwners.get(`${workflow}@${entry.epoch}`);
            if (owner !== undefined && owner !== entry.engineId)
              this.#violate(
                `workflow ${workflow} epoch ${entry.epoch} has timeline entries from ${owner} and ${entry.engineId} (${entry.kind})`,
              );
            this.#epochOwners.set(`${workflow}@${entry.epoch}`, entry.engineId);
          }
        }
      this.#shadow.set(key, value);
    }
  }

  /**
   * A write replacing a run's checkpoint appends the commit record the replaced checkpoint names. The current
   * checkpoint is the last one that landed, stored (`wf-ckpt:`) or carried by a commit record (checkpoint.ts).
   */
  #checkpointsAppend(landed: readonly Landed[]) {
    for (const { operation, kind, workflowId } of landed) {
      if (workflowId === null || (kind !== 'checkpoint' && kind !== 'timeline')) continue;
      if (operation.type === 'delete') {
        if (kind === 'checkpoint') this.#heads.delete(workflowId); // a purge
        continue;
      }
      const next =
        kind === 'checkpoint'
          ? (JSON.parse(operation.value) as Checkpoint)
          : decodeLogRecord(operation.key, operation.value).carried?.checkpoint;
      if (!next) continue;
      const before = this.#heads.get(workflowId);
      this.#heads.set(workflowId, next);
      if (before === undefined || next.run !== before.run) continue;
      const record = commitRecordKey(workflowId, before.run, before);
      if (!landed.some((other) => other.operation.type === 'put' && other.operation.key === record))
        this.#violate(`the checkpoint of ${workflowId} was replaced without appending ${record}`);
    }
  }

  /**
   * Records and earlier runs go only with a purge (a batch that writes the workflow's purge marker), and a
   * purge takes only a finished workflow.
   */
  #purges(landed: readonly Landed[]) {
    for (const { operation, kind, workflowId } of landed) {
      if (operation.type !== 'delete' || (kind !== 'record' && kind !== 'past-run')) continue;
      const id = workflowId ?? '?';
      const marker = keys.purge(id);
      const marked = landed.some((other) => other.operation.type === 'put' && other.operation.key === marker);
      if (!marked) {
        this.#violate(`${operation.key} was deleted, not by a purge`);
        continue;
      }
      if (kind === 'past-run') {
        this.purgedRuns.add(`${id}#${runOf(operation.key)}`);
        this.#runsPurgedOf.add(id);
        continue;
      }
      const previous = this.#shadow.get(operation.key);
      const status = previous === undefined ? 'absent' : (JSON.parse(previous) as WorkflowRecord).status;
      if (!isTerminal(status as WorkflowRecord['status']))
        this.#violate(`a purge deleted workflow ${id} while it was ${status}`);
      this.purgedWorkflows.add(id);
    }
  }

  /** Nothing of a purged workflow (its epoch and purge marker aside) or of a purged earlier run is written. */
  #lateWrites(landed: readonly Landed[]) {
    if (this.purgedWorkflows.size === 0 && this.purgedRuns.size === 0) return;
    for (const { operation, kind, workflowId } of landed) {
      if (operation.type !== 'put' || workflowId === null) continue;
      if (decodeTombstone(operation.value) !== undefined) continue; // a purge's own (checked in #landed)
      if (this.purgedWorkflows.has(workflowId) && !afterPurge.has(kind)) {
        this.#violate(`${operation.key} was written after workflow ${workflowId} was purged`);
        continue;
      }
      if (!this.#runsPurgedOf.has(workflowId)) continue;
      let run: number | null = null;
      if (kind === 'timeline' || kind === 'history' || kind === 'past-run') run = runOf(operation.key);
      else if (kind === 'record' || kind === 'checkpoint')
        run = (JSON.parse(operation.value) as { run: number }).run;
      if (run !== null && this.purgedRuns.has(`${workflowId}#${run}`))
        this.#violate(
          `${operation.key} was written for run ${run} of ${workflowId} after that run was purged`,
        );
    }
  }

  /**
   * New runs: noted; a scheduled one must commit with its schedule's (unpaused) record, and its slot must not
   * have been started before.
   */
  #creations(landed: readonly Landed[]) {
    for (const { operation, kind } of landed) {
      if (operation.type !== 'put' || kind !== 'record') continue;
      const record = JSON.parse(operation.value) as WorkflowRecord;
      const raw = this.#shadow.get(operation.key);
      const previous = raw === undefined ? null : (JSON.parse(raw) as WorkflowRecord);
      // A status change keeps the run and its creation; a new run (or a start over an existing one) does not.
      if (
        previous !== null &&
        previous.run === record.run &&
        previous.createdAt === record.createdAt &&
        previous.createdBy === record.createdBy
      )
        continue;
      const idem = landed.find(
        (other) => other.operation.type === 'put' && other.kind === 'idempotency',
      )?.operation;
      this.creations.push({
        workflowId: record.id,
        run: record.run,
        type: record.type,
        ...(record.scheduledBy ? { scheduledBy: record.scheduledBy } : {}),
        ...(idem ? { idempotencyKey: idem.key } : {}),
      });
      const by = record.scheduledBy;
      if (!by || by.trigger) continue;
      const slot = `${by.schedule}@${by.slot}`;
      const earlier = this.#slots.get(slot);
      if (earlier !== undefined)
        this.#violate(`slot ${slot} of schedule ${by.schedule} started twice: ${earlier} and ${record.id}`);
      this.#slots.set(slot, record.id);
      if (record.id !== slotWorkflowId(by.schedule, by.slot))
        this.#violate(`schedule ${by.schedule} started ${record.id} for slot ${by.slot}: not the slot's id`);
      const scheduleKey = keys.schedule(by.schedule);
      const advanced = landed.some(
        (other) => other.operation.type === 'put' && other.operation.key === scheduleKey,
      );
      const before = this.#shadow.get(scheduleKey);
      if (!advanced || before === undefined)
        this.#violate(
          `${record.id} was started without advancing schedule ${by.schedule} in the same commit`,
        );
      else if ((JSON.parse(before) as ScheduleRecord).paused)
        this.#violate(`${record.id} was started by schedule ${by.schedule} while it was paused`);
    }
  }
}
