/**
 * Transitions of a workflow that do not come from its own run: start (and child start), the delayed start
 * firing, terminate / suspend / time out (external rotation), resume, cancel requests and signals.
 *
 * Every transition is one conditional batch through the fenced writer, built from values just read and
 * conditioned on their exact strings (the record, the checkpoint, and under `workflow-lease` the epoch and
 * holder). Input is validated before anything is read or written.
 *
 * - **start**: under `workflow-lease` the claim is folded into the create batch, so the winner of a start
 *   race is the only engine that runs any code. The loser re-reads to tell a claim conflict
 *   (`WorkflowClaimUnavailableError`) from an existing workflow (`WorkflowAlreadyExistsError`).
 * - **rotation** (terminate, suspend, timeout): epoch + 1 and holder deleted together with the new status;
 *   any engine may do it; the owner's next write is refused, so a terminal state is never overwritten.
 *   Signals, cancel requests and updates do not rotate: the owner handles them.
 * - **resume**: the suspended → running flip with the acquire folded in; the caller then drives it.
 */
import { storageLimits, type Condition, type Operation, type Storage } from '../storage/types';
import { utf8Bytes } from '../storage/utf8';
import {
  applyAttributeChanges,
  attributeChanges,
  attributeIndexKey,
  attributeIndexWrites,
  attributesOfHistory,
  type AttributeInput,
  type SearchAttributes,
} from './attributes';
import type { Clock } from './clock';
import { encodePayload, normalizePayload, type Json } from './codec';
import {
  CorruptRecordError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidSearchAttributeError,
  InvalidWorkflowStateError,
  WorkflowAlreadyExistsError,
  WorkflowClaimUnavailableError,
  WorkflowIdReuseError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
  SingletonConflictError,
  serializeError,
  type SerializedError,
} from './errors';
import { forkHistory, readForkSource, validateForkOptions, type ForkOptions } from './fork';
import { assertHandlerName, assertWorkflowId, uuidFrom } from './ids';
import { escapeId, keys } from './keys';
import type { WorkflowStatus } from './vocabulary';
import type { FencedWriter, WriteOutcome } from './ownership/fenced-write';
import { readHolder } from './ownership/holder';
import type { Ownership } from './ownership/ownership';
import type { MintedClaim } from './ownership/transitions';
import { lastLogRecord, workflowView } from './checkpoint';
import {
  encodePastRun,
  decodeRecord,
  isTerminal,
  type CancelRequest,
  type Checkpoint,
  type ForkedFrom,
  type HistoryEntry,
  type ParentLink,
  type ScheduledBy,
  type SignalRecord,
  type TimerRecord,
  type UpdateRequest,
  type WorkflowRecord,
} from './records';
import type { ChildPlan, ChildRequest } from './run/workflow-run';
import {
  changeStatus,
  encodeCommitRecord,
  executionTimerKey,
  frontierTimerKeys,
  newCheckpoint,
  startTimerKey,
  type TimelineNote,
  type WorkflowView,
  timelineEntry,
  timelineWrite,
} from './workflow-writes';
import { storedTrace, type TraceContext, type Tracing, type TracerSpan } from './tracing';
import type { AnyWorkflowDefinition } from './workflow';
import { mutation } from './mutations';
import {
  admissionOrder,
  defaultPriority,
  validateQueueStart,
  type QueueDeclaration,
  type QueueMembership,
  type QueueStartOptions,
  type StartKeyMembership,
} from './queues/queue-options';
import { decodeStartKey, encodeWaitEntry, type SlotRecord, type StartKeyRecord } from './queues/records';

export type StartOptions = QueueStartOptions & {
  /** The workflow id. Default: a random UUID. 1–256 characters. */
  id?: string;
  /** The workflow is `timed-out` if it has not finished this many ms after it started. */
  executionTimeoutMs?: number;
  /** Start later: the workflow is `pending` until then, in ms from now. */
  startDelayMs?: number;
  /**
   * When the id belongs to a finished workflow: start a new run of the same type (`'same-type'`, the
   * default), of any type (`'any-type'`), or refuse (`'never'`). Earlier runs are kept (run history).
   */
  idReuse?: IdReuse;
  /**
   * Starts at most one run per key within the engine's `idempotencyWindowMs` (default 24 h): a start with a
   * key already used returns the run it started (whatever its id, type or input), across engines. 1–200
   * characters.
   */
  idempotencyKey?: string;
  /**
   * Search attributes the workflow starts with, as `ctx.setAttributes` takes them (names the definition
   * declares, values of their types; a time as a `Date`, epoch ms or ISO-8601), written with its record and
   * index keys in the start's commit. A bad one is `InvalidSearchAttributeError`; nothing is written.
   */
  attributes?: Record<string, AttributeInput>;
};

/** A stored idempotency key (`keys.idempotency`). */
type IdempotencyRecord = { workflowId: string; run: number; at: number };

export function decodeIdempotency(raw: string | null): IdempotencyRecord | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<IdempotencyRecord>;
    if (typeof value.workflowId === 'string' && Number.isSafeInteger(value.run) && Number.isFinite(value.at))
      return value as IdempotencyRecord;
  } catch {
    // unreadable: treated as absent, and overwritten under a condition on its exact text
  }
  return null;
}

/**
 * The search attributes a start's `attributes` option gives the workflow (undefined for none); throws
 * `InvalidSearchAttributeError` for a name the definition does not declare, a value of another type, too
 * many, or an index key past the storage key limit.
 */
function startAttributes(
  id: string,
  definition: AnyWorkflowDefinition,
  given: Record<string, AttributeInput>,
): SearchAttributes | undefined {
  const changes = attributeChanges(definition.name, definition.attributes, given, 'start option attributes');
  const attributes = applyAttributeChanges(id, undefined, changes);
  for (const [name, attribute] of Object.entries(attributes ?? {})) {
    const bytes = utf8Bytes(attributeIndexKey(name, attribute, escapeId(id)));
    if (bytes > storageLimits.maxKeyBytes)
      throw new InvalidSearchAttributeError(
        name,
        `Workflow '${id}': the index key of attribute '${name}' would be ${bytes} bytes, over the storage limit of ${storageLimits.maxKeyBytes} (the workflow id and the value share it); use a shorter value.`,
      );
  }
  return attributes;
}

export const idReuseValues = ['same-type', 'any-type', 'never'] as const;
export type IdReuse = (typeof idReuseValues)[number];

export type LifecycleDeps = {
  storage: Storage;
  writer: FencedWriter;
  ownership: Ownership;
  clock: Clock;
  random: () => number;
  engineId: string;
  maxPayloadBytes: number;
  /** The registered definition of `type` (`version`: exactly that one; otherwise the newest). */
  definition: (type: string, version?: number) => AnyWorkflowDefinition | undefined;
  /** False for observer engines: starts create the workflow unclaimed, for another engine to run. */
  claimsOnStart: boolean;
  /** An enabling write landed: note its claim and drive the workflow here. */
  claimed: (
    workflowId: string,
    workflowType: string,
    minted: MintedClaim | null,
    how: 'start' | 'resume' | 'acquire',
  ) => void;
  /** A rotation landed: stop driving the workflow here if this engine did. */
  rotated: (workflowId: string, record: WorkflowRecord) => void;
  timerArmed: (dueAt: number) => void;
  /** How long an idempotency key holds, in ms. */
  idempotencyWindowMs: number;
  /** Spans for starts and signals (tracing.ts). */
  tracing: Tracing;
  /** The queues this engine declares (`createEngine({ queues })`). */
  queues: ReadonlyMap<string, QueueDeclaration>;
  /** A workflow was enqueued onto `queue`: look for a free slot. */
  enqueued: (queue: string) => void;
  /**
   * The slots a start onto `queue` may take at once (a free slot, key slot and token, and nobody waiting), or
   * null: then it waits in the queue like any other (queues/queues.ts `directGrant`).
   */
  directGrant: (
    queue: string,
    key: string | undefined,
  ) => Promise<Omit<QueueGrant, 'waitKey' | 'waitRaw'> | null>;
  /** A start onto `queue` was admitted in its own create batch, and this engine drives it. */
  admittedDirectly: (queue: string, workflowId: string) => void;
};

type Read = WorkflowView & { epochRaw: string | null; holderRaw: string | null };

/** A create batch (`planStart`): commit `conditions` + `operations`, then call `afterCommit`. */
export type CreatePlan =
  | {
      ok: true;
      run: number;
      conditions: Condition[];
      operations: Operation[];
      afterCommit: () => void;
      /** It admits the workflow from its queue at once (its slots are conditions of the batch). */
      direct?: boolean;
    }
  | { ok: false; error: Error };

const maxAttempts = 5;

/** Internal: a create lost its conditional commit (signal-with-start then looks again). */
class CreateRaceLost extends Error {}

function quote(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The singleton or debounce key of a start, scoped by its queue (or by its type without one). */
function startKeyOf(
  definition: AnyWorkflowDefinition,
  options: StartOptions,
  queue: QueueDeclaration | null,
): StartKeyMembership | null {
  const scope = queue ? `queue:${queue.name}` : `type:${definition.name}`;
  if (options.singleton) return { scope, kind: 'singleton', key: options.singleton.key };
  if (options.debounce) return { scope, kind: 'debounce', key: options.debounce.key };
  return null;
}

/** What a queue admission takes with the workflow, each conditioned as read (queues/queues.ts picks them). */
export type QueueGrant = {
  /** The wait entry's key and exact text. */
  waitKey: string;
  waitRaw: string;
  /** The queue slot it takes (a key read absent, or a stale holder's exact text). */
  slot?: { index: number; expected: string | null };
  keySlot?: { index: number; expected: string | null };
  /** The rate token it uses, and its text as read. */
  rate?: { index: number; expected: string | null };
};

/**
 * What an admission writes besides the record: the queue slot, the key slot and the rate token it takes, each
 * conditioned on its text as read (`grant`), valued with who holds it since when. (Under the test-only
 * mutation `queue-ignores-limit` the queue slot is written without its condition.)
 */
function grantWrites(
  queue: Pick<QueueMembership, 'name' | 'key'>,
  workflowId: string,
  grant: Omit<QueueGrant, 'waitKey' | 'waitRaw'>,
  holder: { at: number; by: string },
): { conditions: Condition[]; operations: Operation[] } {
  const conditions: Condition[] = [];
  const operations: Operation[] = [];
  const slot = JSON.stringify({ id: workflowId, ...holder } satisfies SlotRecord);
  const take = (key: string, expected: string | null, value: string, conditioned = true) => {
    if (conditioned) conditions.push({ key, expected });
    operations.push({ type: 'put', key, value });
  };
  if (grant.slot)
    take(
      keys.queueSlot(queue.name, grant.slot.index),
      grant.slot.expected,
      slot,
      mutation() !== 'queue-ignores-limit',
    );
  if (grant.keySlot && queue.key !== undefined)
    take(keys.queueKeySlot(queue.name, queue.key, grant.keySlot.index), grant.keySlot.expected, slot);
  if (grant.rate)
    take(
      keys.queueRate(queue.name, grant.rate.index),
      grant.rate.expected,
      JSON.stringify({ at: holder.at, id: workflowId }),
    );
  return { conditions, operations };
}

/**
 * What a pending workflow's start adds to its batch (a delayed start falling due, a queue admitting it): its
 * debounce key goes (it is no longer joinable), its execution deadline's timer is armed. Returns that timer's
 * key (null without a deadline).
 */
function startsRunning(
  write: { operations: Operation[] },
  next: WorkflowRecord,
  debounceKey: StartKeyMembership | undefined,
): string | null {
  if (debounceKey)
    write.operations.push({
      type: 'delete',
      key: keys.startKey(debounceKey.scope, debounceKey.kind, debounceKey.key),
    });
  const executionKey = executionTimerKey(next);
  if (executionKey)
    write.operations.push({
      type: 'put',
      key: executionKey,
      value: JSON.stringify({
        workflowId: next.id,
        purpose: 'execution',
        run: next.run,
      } satisfies TimerRecord),
    });
  return executionKey;
}

export class Lifecycle {
  constructor(private readonly deps: LifecycleDeps) {}

  /**
   * An engine-scoped write was refused because this engine was deposed (the store-wide lease was taken):
   * that is not a race to retry, and surfaces at once.
   */
  #assertNotDeposed(outcome: WriteOutcome): void {
    if (!outcome.ok && outcome.reason === 'deposed') throw new EngineLeaseNotHeldError(this.deps.engineId);
  }

  /**
   * An engine-scoped write (no workflow claim fences it), with the conditions and operations of a claim minted
   * or rotated with it; a refusal because this engine was deposed throws (`#assertNotDeposed`).
   */
  async #write(
    write: { conditions: Condition[]; operations: Operation[] },
    what: string,
    claim?: { conditions: readonly Condition[]; operations: readonly Operation[] } | null,
  ): Promise<WriteOutcome> {
    const conditions = claim ? [...write.conditions, ...claim.conditions] : write.conditions;
    const operations = claim ? [...write.operations, ...claim.operations] : write.operations;
    const outcome = await this.deps.writer.write(null, conditions, operations, what);
    this.#assertNotDeposed(outcome);
    return outcome;
  }

  /** Whether `write`'s record is what is stored now (a write whose answer was lost may have landed). */
  async #landed(workflowId: string, write: { operations: Operation[] }): Promise<boolean> {
    const put = write.operations.find((op) => op.type === 'put' && op.key === keys.record(workflowId));
    if (!put || put.type !== 'put') return false;
    try {
      return (await this.deps.storage.get(keys.record(workflowId))) === put.value;
    } catch {
      return false;
    }
  }

  async #read(workflowId: string): Promise<Read | null> {
    const [[recordRaw, checkpointRaw, epochRaw, holderRaw], last] = await Promise.all([
      this.deps.storage.getMany([
        keys.record(workflowId),
        keys.checkpoint(workflowId),
        keys.ownerEpoch(workflowId),
        keys.ownerHolder(workflowId),
      ]),
      lastLogRecord(this.deps.storage, workflowId),
    ]);
    if (!recordRaw) return null;
    decodeRecord(keys.record(workflowId), recordRaw);
    if (!checkpointRaw)
      throw new CorruptRecordError(keys.checkpoint(workflowId), 'missing while its workflow record exists');
    const view = await workflowView(this.deps.storage, workflowId, recordRaw, checkpointRaw, last);
    if (!view) return null;
    return { ...view, epochRaw: epochRaw ?? null, holderRaw: holderRaw ?? null };
  }

  /**
   * The run number a start of an id without a record takes: 1, or where its purged runs left tombstones
   * (only an id with per-workflow claims has them: purge.ts), the run after the last of them, so that a late
   * owner's commit into an old run never lands in the new one.
   */
  async #firstRunOf(id: string, epochRaw: string | null): Promise<number> {
    if (epochRaw === null) return 1;
    const [last] = await this.deps.storage.scan(keys.logsOf(id), { reverse: true, limit: 1 });
    const run = last ? keys.runOfLog(id, last.key) : 0;
    return Number.isSafeInteger(run) ? run + 1 : 1;
  }

  #who(epoch: number) {
    return { engineId: this.deps.engineId, epoch, now: this.deps.clock.now() };
  }

  // -------------------------------------------------------------------------------------------------------
  // start

  /**
   * The queue a start goes onto (its `queue` option, else its definition's), checked against this engine's
   * declarations; null for a start that runs at once. `concurrencyKey` and `priority` need a queue.
   */
  queueOf(definition: AnyWorkflowDefinition, options: StartOptions): QueueDeclaration | null {
    const name = options.queue ?? definition.queue;
    if (name === undefined) {
      for (const option of ['concurrencyKey', 'priority'] as const)
        if (options[option] !== undefined)
          throw new InvalidOptionsError(
            `start option ${option} needs a queue: pass { queue } (declared in createEngine({ queues })), or give workflow '${definition.name}' a default queue.`,
          );
      return null;
    }
    const queue = this.deps.queues.get(name);
    if (!queue)
      throw new InvalidOptionsError(
        `Queue '${name}' is not declared on this engine${options.queue === undefined ? ` (workflow '${definition.name}' names it as its queue)` : ''}; declare it with createEngine({ queues: { '${name}': { concurrency: … } } }) on every engine that starts or runs its workflows.`,
      );
    return queue;
  }

  /** Validates start arguments before anything is read. */
  validateStart(
    type: string,
    input: unknown,
    options: StartOptions,
  ): { id: string; input: Json | undefined; definition: AnyWorkflowDefinition } {
    if (typeof options !== 'object' || options === null)
      throw new InvalidOptionsError(
        'start options must be an object like { id, executionTimeoutMs, startDelayMs }.',
      );
    const known = new Set([
      'id',
      'executionTimeoutMs',
      'startDelayMs',
      'idReuse',
      'idempotencyKey',
      'attributes',
      'queue',
      'concurrencyKey',
      'priority',
      'singleton',
      'debounce',
    ]);
    for (const key of Object.keys(options))
      if (!known.has(key))
        throw new InvalidOptionsError(
          `Unknown start option '${key}'; use id, executionTimeoutMs, startDelayMs, idReuse, idempotencyKey, attributes, queue, concurrencyKey, priority, singleton or debounce.`,
        );
    validateQueueStart(options);
    if (options.debounce !== undefined && options.startDelayMs !== undefined)
      throw new InvalidOptionsError(
        'A start takes debounce or startDelayMs, not both: a debounced start begins debounce.windowMs after the last start with its key.',
      );
    const idem = options.idempotencyKey;
    if (idem !== undefined && (typeof idem !== 'string' || idem.length === 0 || idem.length > 200))
      throw new InvalidOptionsError(
        `start option idempotencyKey must be a string of 1 to 200 characters; got ${quote(idem)}.`,
      );
    if (options.idReuse !== undefined && !idReuseValues.includes(options.idReuse))
      throw new InvalidOptionsError(
        `start option idReuse must be one of ${idReuseValues.map((value) => `'${value}'`).join(', ')}; got ${quote(options.idReuse)}.`,
      );
    const definition = this.deps.definition(type);
    if (!definition) throw new WorkflowNotRegisteredError(type);
    const id = options.id ?? uuidFrom(this.deps.random);
    assertWorkflowId(id);
    for (const name of ['executionTimeoutMs', 'startDelayMs'] as const) {
      const value = options[name];
      if (
        value !== undefined &&
        (typeof value !== 'number' ||
          !Number.isFinite(value) ||
          value < 0 ||
          (name === 'executionTimeoutMs' && value === 0))
      )
        throw new InvalidOptionsError(
          `start option ${name} must be a ${name === 'startDelayMs' ? 'non-negative' : 'positive'} number of milliseconds; got ${quote(value)}.`,
        );
    }
    if (options.attributes !== undefined) startAttributes(id, definition, options.attributes);
    this.queueOf(definition, options);
    const stored = normalizePayload(input, `Input of workflow '${id}'`, this.deps.maxPayloadBytes) as
      Json | undefined;
    return { id, input: stored, definition };
  }

  /**
   * Creates a workflow (pending or running) and, for running ones under workflow-lease, claims it. Returns
   * its id and the number of the run it created; `started: false` when its `idempotencyKey` had already
   * started a run within the window (that run is returned, and nothing is created).
   */
  async start(
    type: string,
    input: unknown,
    options: StartOptions = {},
  ): Promise<{ id: string; run: number; started: boolean }> {
    const { id, input: stored, definition } = this.validateStart(type, input, options);
    return this.#create(id, { definition, input: stored, options }, null);
  }

  /**
   * Signal-with-start: delivers signal `name` to workflow `id` if it is running, else starts it (a new run
   * of a finished id follows `idReuse`) with the signal buffered in the same commit, so the new run finds it
   * at its first wait. Race-safe across engines: the signal lands exactly once, in whichever run is current.
   */
  async signalWithStart(
    type: string,
    input: unknown,
    name: string,
    payload: unknown,
    options: StartOptions,
  ): Promise<{ id: string; run: number; started: boolean }> {
    if (typeof options !== 'object' || options === null || options.id === undefined)
      throw new InvalidOptionsError(
        'signalWithStart needs { id }: the signal goes to the workflow of that id, started if it is not running.',
      );
    if (options.idempotencyKey !== undefined)
      throw new InvalidOptionsError(
        'signalWithStart takes no idempotencyKey: its id already makes it idempotent.',
      );
    const { id, input: stored, definition } = this.validateStart(type, input, options);
    assertHandlerName(name, 'Signal');
    const text = encodePayload(
      payload,
      `Payload of signal '${name}' to workflow '${id}'`,
      this.deps.maxPayloadBytes,
    );
    const signal = (): SignalRecord => ({
      name,
      ...(text === undefined ? {} : { payload: JSON.parse(text) as Json }),
      sentAt: this.deps.clock.now(),
      sentBy: this.deps.engineId,
    });
    for (let attempt = 0; attempt < maxAttempts * 4; attempt++) {
      const read = await this.#read(id);
      if (read && !isTerminal(read.record.status)) {
        // Running: an ordinary signal, conditioned on the record so a run that ends meanwhile is noticed.
        const counterKey = keys.signalCounter(id);
        const counterRaw = await this.deps.storage.get(counterKey);
        const seq = counterRaw === null ? 0 : Number(counterRaw);
        const outcome = await this.#write(
          {
            conditions: [
              { key: counterKey, expected: counterRaw },
              { key: keys.record(id), expected: read.recordRaw },
            ],
            operations: [
              { type: 'put', key: keys.signal(id, seq), value: JSON.stringify(signal()) },
              { type: 'put', key: counterKey, value: String(seq + 1) },
            ],
          },
          `signal '${name}' to '${id}'`,
        );
        if (outcome.ok) return { id, run: read.record.run, started: false };
        continue;
      }
      try {
        const created = await this.#create(id, { definition, input: stored, options }, signal(), 1);
        return { id: created.id, run: created.run, started: true };
      } catch (error) {
        // Started by someone else meanwhile: signal that run instead.
        if (
          error instanceof WorkflowAlreadyExistsError ||
          error instanceof WorkflowClaimUnavailableError ||
          error instanceof CreateRaceLost
        )
          continue;
        throw error;
      }
    }
    throw new InvalidWorkflowStateError(id, 'changing too fast', `signal-with-start '${name}'`, 'Try again.');
  }

  /**
   * Update-with-start, the start half: starts workflow `options.id` with `request` stored beside it in the
   * same commit (its first turn applies it), unless it is running — then nothing is written and `started` is
   * false (the caller requests the update of the running workflow). A finished id starts a new run, per
   * `idReuse`. Race-safe across engines as signal-with-start is.
   */
  async startWithUpdate(
    type: string,
    input: unknown,
    request: UpdateRequest,
    options: StartOptions,
  ): Promise<{ id: string; run: number; started: boolean }> {
    if (typeof options !== 'object' || options === null || options.id === undefined)
      throw new InvalidOptionsError(
        'updateWithStart needs { id }: the update goes to the workflow of that id, started if it is not running.',
      );
    if (options.idempotencyKey !== undefined)
      throw new InvalidOptionsError(
        'updateWithStart takes no idempotencyKey: its id already makes it idempotent.',
      );
    const { id, input: stored, definition } = this.validateStart(type, input, options);
    for (let attempt = 0; attempt < maxAttempts * 4; attempt++) {
      const read = await this.#read(id);
      if (read && !isTerminal(read.record.status)) return { id, run: read.record.run, started: false };
      try {
        return await this.#create(id, { definition, input: stored, options }, null, 1, request);
      } catch (error) {
        if (
          error instanceof WorkflowAlreadyExistsError ||
          error instanceof WorkflowClaimUnavailableError ||
          error instanceof CreateRaceLost
        )
          continue; // started by someone else meanwhile: update that run
        throw error;
      }
    }
    throw new InvalidWorkflowStateError(id, 'changing too fast', 'update-with-start', 'Try again.');
  }

  /**
   * Commits a create (with its idempotency key and a first buffered signal, when given); `attempts` bounds
   * the retries (signal-with-start retries itself, and wants a lost race back as `CreateRaceLost`).
   */
  async #create(
    id: string,
    args: { definition: AnyWorkflowDefinition; input: Json | undefined; options: StartOptions },
    firstSignal: SignalRecord | null,
    attempts = maxAttempts,
    firstUpdate: UpdateRequest | null = null,
  ): Promise<{ id: string; run: number; started: boolean }> {
    // The start's span, in the starter's trace: its context is stored with the workflow, for every engine
    // that drives it to parent its spans on.
    const span = this.deps.tracing.start(
      'shuttle.workflow.start',
      'active',
      {
        'shuttle.workflow.id': id,
        'shuttle.workflow.type': args.definition.name,
        'shuttle.engine.id': this.deps.engineId,
      },
      'producer',
    );
    try {
      const created = await this.#createOnce(
        id,
        args,
        firstSignal,
        attempts,
        firstUpdate,
        storedTrace(span.context),
      );
      span.setAttributes({
        'shuttle.workflow.run': created.run,
        'shuttle.workflow.started': created.started,
      });
      return created;
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  async #createOnce(
    id: string,
    args: { definition: AnyWorkflowDefinition; input: Json | undefined; options: StartOptions },
    firstSignal: SignalRecord | null,
    attempts: number,
    firstUpdate: UpdateRequest | null,
    trace: TraceContext | undefined,
  ): Promise<{ id: string; run: number; started: boolean }> {
    const { definition, input: stored, options } = args;
    const queue = this.queueOf(definition, options);
    const startKey = startKeyOf(definition, options, queue);
    const idemKey = options.idempotencyKey === undefined ? null : keys.idempotency(options.idempotencyKey);
    const window = this.deps.idempotencyWindowMs;
    const existingRun = async (): Promise<{ raw: string | null; live: IdempotencyRecord | null }> => {
      const raw = idemKey ? await this.deps.storage.get(idemKey) : null;
      const held = decodeIdempotency(raw);
      return { raw, live: held && held.at + window > this.deps.clock.now() ? held : null };
    };
    // The first attempt of a plain start assumes the id has nothing stored — the common case, and always so
    // for a generated id — and commits at once: every assumption is a condition of the commit, so an id with
    // a record, a claim, tombstones or a purge in progress fails it and the next attempt reads. A start is then
    // one round trip instead of three.
    let assumeAbsent = firstSignal === null && firstUpdate === null;
    // A start onto a queue with room (and nobody waiting) is admitted in its own create batch; when that batch
    // loses a race for a slot, it waits in the queue instead.
    let direct = queue !== null && options.debounce === undefined && !(options.startDelayMs! > 0);
    for (let attempt = 0; attempt < attempts; attempt++) {
      const idem = await existingRun();
      if (idem.live) return { id: idem.live.workflowId, run: idem.live.run, started: false };
      // A singleton or debounce key names the workflow a start with it joins, while that one is active.
      let startKeyRaw: string | null = null;
      if (startKey) {
        const held = await this.#activeStartKey(startKey);
        if (held.active) {
          const { record } = held.active;
          if (startKey.kind === 'singleton') {
            if (options.singleton?.ifActive === 'refuse')
              throw new SingletonConflictError(startKey.key, record.id, record.status);
            return { id: record.id, run: record.run, started: false };
          }
          if (await this.#debounceAgain(held.active, stored, options.debounce!))
            return { id: record.id, run: record.run, started: false };
          continue; // it changed meanwhile (admitted, started, cancelled): look again
        }
        startKeyRaw = held.raw;
      }
      const optimistic = assumeAbsent;
      const plan = await this.#planCreate({
        id,
        definition,
        input: stored,
        options,
        parent: undefined,
        assumeAbsent: optimistic,
        trace,
        queue,
        startKey: startKey ? { membership: startKey, expected: startKeyRaw } : undefined,
        direct,
      });
      if (!plan.ok) throw plan.error;
      const conditions = [...plan.conditions];
      const operations = [...plan.operations];
      if (idemKey) {
        conditions.push({ key: idemKey, expected: idem.raw });
        const record: IdempotencyRecord = { workflowId: id, run: plan.run, at: this.deps.clock.now() };
        operations.push({ type: 'put', key: idemKey, value: JSON.stringify(record) });
      }
      if (firstUpdate) {
        // Update-with-start: the request is stored with the workflow, so its first turn applies it.
        const requestKey = keys.updateRequest(id, firstUpdate.updateId);
        conditions.push({ key: requestKey, expected: null });
        operations.push({ type: 'put', key: requestKey, value: JSON.stringify(firstUpdate) });
      }
      if (firstSignal) {
        const counterKey = keys.signalCounter(id);
        const counterRaw = await this.deps.storage.get(counterKey);
        const seq = counterRaw === null ? 0 : Number(counterRaw);
        conditions.push({ key: counterKey, expected: counterRaw });
        operations.push(
          { type: 'put', key: keys.signal(id, seq), value: JSON.stringify(firstSignal) },
          { type: 'put', key: counterKey, value: String(seq + 1) },
        );
      }
      const outcome = await this.#write({ conditions, operations }, `start workflow '${id}'`);
      if (outcome.ok) {
        plan.afterCommit();
        return { id, run: plan.run, started: true };
      }
      // Another start with the same idempotency key landed first: that run is the answer.
      const raced = await existingRun();
      if (raced.live) return { id: raced.live.workflowId, run: raced.live.run, started: false };
      if (attempts === 1) throw new CreateRaceLost();
      // Tell a claim conflict from our own conflicts by re-reading (a corrupt record after a guess: the next
      // attempt's plan reports it).
      const read = await this.#read(id).catch((error: unknown) => {
        if (optimistic && error instanceof CorruptRecordError) return null;
        throw error;
      });
      // A workflow that runs is the conflict, whoever holds it (a start names the workflow, not a claim).
      if (read && !isTerminal(read.record.status))
        throw new WorkflowAlreadyExistsError(id, read.record.status);
      const holder = readHolder(read?.holderRaw ?? null);
      if (holder?.holder && holder.holder.engineId !== this.deps.engineId)
        throw new WorkflowClaimUnavailableError(id, {
          engineId: holder.holder.engineId,
          epoch: holder.holder.epoch,
          expiresAt: holder.holder.expiresAt,
        });
      if (optimistic || plan.direct) {
        // Something else is stored under this id (a finished run, tombstones, a purge), or another start took
        // the slot this one counted on: plan from what is stored, into the queue, and do not count the guess
        // as an attempt.
        assumeAbsent = false;
        direct = false;
        attempt--;
      }
    }
    throw new WorkflowClaimUnavailableError(id, null);
  }

  /**
   * The create batch of a workflow, not committed: for a write that starts a workflow together with changes
   * of its own (a schedule firing a slot commits it with the schedule's advance, in one conditional batch).
   * The caller validated the arguments (`validateStart`), commits `conditions` and `operations` through the
   * fenced writer, and calls `afterCommit` once they landed.
   */
  async planStart(
    args: { id: string; definition: AnyWorkflowDefinition; input: Json | undefined; options: StartOptions },
    scheduledBy: ScheduledBy,
  ): Promise<CreatePlan> {
    const span = this.deps.tracing.start('shuttle.workflow.start', 'root', {
      'shuttle.workflow.id': args.id,
      'shuttle.workflow.type': args.definition.name,
      'shuttle.engine.id': this.deps.engineId,
      'shuttle.schedule': scheduledBy.schedule,
    });
    const plan = await this.#planCreate({
      ...args,
      parent: undefined,
      scheduledBy,
      trace: storedTrace(span.context),
      queue: this.queueOf(args.definition, args.options),
    }).catch((error: unknown) => {
      span.recordError(error);
      span.end();
      throw error;
    });
    return endingSpan(plan, span);
  }

  /** The create batch of a child workflow, to be committed with its parent's turn. */
  async prepareChild(request: ChildRequest): Promise<ChildPlan> {
    const definition = this.deps.definition(request.workflowType);
    if (!definition)
      return { ok: false, error: stripped(new WorkflowNotRegisteredError(request.workflowType)) };
    try {
      assertWorkflowId(request.childId, 'Child workflow id');
    } catch (error) {
      return { ok: false, error: stripped(error) };
    }
    const parent: ParentLink = {
      id: request.parent.id,
      run: request.parent.run,
      pos: request.pos,
      member: request.member,
      closePolicy: request.closePolicy,
    };
    // The child's start, in its parent's trace (ended when the parent's turn that creates it landed).
    const span = this.deps.tracing.start('shuttle.workflow.start', storedTrace(request.parent.trace), {
      'shuttle.workflow.id': request.childId,
      'shuttle.workflow.type': definition.name,
      'shuttle.workflow.parent_id': request.parent.id,
      'shuttle.engine.id': this.deps.engineId,
    });
    const plan = endingSpan(
      await this.#planCreate({
        id: request.childId,
        definition,
        input: request.input as Json | undefined,
        options: {},
        parent,
        trace: storedTrace(span.context),
      }),
      span,
    );
    if (!plan.ok) return { ok: false, error: stripped(plan.error) };
    return {
      ok: true,
      childId: request.childId,
      conditions: plan.conditions,
      operations: plan.operations,
      afterCommit: plan.afterCommit,
    };
  }

  async #planCreate(args: {
    id: string;
    definition: AnyWorkflowDefinition;
    input: Json | undefined;
    options: StartOptions;
    parent: ParentLink | undefined;
    scheduledBy?: ScheduledBy;
    /** A fork (fork.ts): the run it copies and the history it replays, carried by its first log record. */
    fork?: { from: ForkedFrom; history: HistoryEntry[] };
    /**
     * Plan without reading, as for an id with nothing stored (no record, checkpoint, claim, epoch or purge):
     * the plan's conditions expect each of them absent, so the commit fails where the guess was wrong.
     */
    assumeAbsent?: boolean;
    /** The trace context stored with the workflow (tracing.ts). */
    trace?: TraceContext;
    /** The queue it waits in until a slot is free (`queueOf`); none: it starts at once. */
    queue?: QueueDeclaration | null;
    /** Its singleton or debounce key, and the key's stored value the start replaces (a stale one, or none). */
    startKey?: { membership: StartKeyMembership; expected: string | null };
    /** Admit it at once if its queue has room and nobody waits (`directGrant`). */
    direct?: boolean;
  }): Promise<CreatePlan> {
    const { id, definition, input, options, parent, scheduledBy, fork, assumeAbsent = false } = args;
    const queue = args.queue ?? null;
    const { clock, engineId, ownership } = this.deps;
    const existing = assumeAbsent
      ? null
      : await this.#read(id).catch((error: unknown) => {
          if (error instanceof CorruptRecordError) return 'corrupt' as const;
          throw error;
        });
    if (existing === 'corrupt')
      return { ok: false, error: new WorkflowAlreadyExistsError(id, 'stored with a corrupt record') };
    if (existing && !isTerminal(existing.record.status))
      return { ok: false, error: new WorkflowAlreadyExistsError(id, existing.record.status) };
    const idReuse = options.idReuse ?? 'same-type';
    if (existing && idReuse === 'never')
      return { ok: false, error: new WorkflowIdReuseError(id, existing.record.type, null) };
    if (existing && idReuse === 'same-type' && existing.record.type !== definition.name)
      return { ok: false, error: new WorkflowIdReuseError(id, existing.record.type, definition.name) };
    const [epochRaw, holderRaw, purgeRaw] = existing
      ? [existing.epochRaw, existing.holderRaw, null]
      : assumeAbsent
        ? [null, null, null]
        : await this.deps.storage.getMany([keys.ownerEpoch(id), keys.ownerHolder(id), keys.purge(id)]);
    if (purgeRaw)
      return {
        ok: false,
        error: new InvalidWorkflowStateError(
          id,
          'being purged',
          'start',
          'Its old runs are still being deleted; try again in a moment.',
        ),
      };
    const now = clock.now();
    // A debounced start waits its window; a queued one waits for a slot (and its delay, if any).
    const delayMs = options.debounce ? options.debounce.windowMs : (options.startDelayMs ?? 0);
    const delayed = delayMs > 0 && !queue;
    const grant =
      queue && args.direct && delayMs <= 0 && this.deps.claimsOnStart
        ? await this.deps.directGrant(queue.name, options.concurrencyKey)
        : null;
    const waits = delayed || (queue !== null && !grant);
    const run = existing ? existing.record.run + 1 : await this.#firstRunOf(id, epochRaw ?? null);
    let membership: QueueMembership | undefined;
    if (queue) {
      const priority = options.priority ?? defaultPriority;
      membership = {
        name: queue.name,
        ...(options.concurrencyKey === undefined ? {} : { key: options.concurrencyKey }),
        priority,
        enqueuedAt: now,
        order: admissionOrder(now, priority, queue.priorityStepMs),
        ...(delayMs > 0 ? { notBefore: now + delayMs } : {}),
        ...(grant
          ? {
              admittedAt: now,
              ...(grant.slot ? { slot: grant.slot.index } : {}),
              ...(grant.keySlot ? { keySlot: grant.keySlot.index } : {}),
            }
          : {}),
      };
    }
    const record: WorkflowRecord = {
      v: 1,
      id,
      type: definition.name,
      version: definition.version,
      run,
      status: waits ? 'pending' : 'running',
      ...(input === undefined ? {} : { input }),
      createdAt: now,
      ...(delayed ? { startAt: now + delayMs } : waits ? {} : { startedAt: now }),
      ...(membership ? { queue: membership } : {}),
      ...(args.startKey ? { startKey: args.startKey.membership } : {}),
      ...(options.executionTimeoutMs !== undefined ? { executionTimeoutMs: options.executionTimeoutMs } : {}),
      ...(parent ? { parent } : {}),
      ...(scheduledBy ? { scheduledBy } : {}),
      ...(fork ? { forkedFrom: fork.from } : {}),
      createdBy: engineId,
      ...(args.trace ? { trace: args.trace } : {}),
    };
    // A fork starts with the search attributes its copied history set (their entries carry the changes); a
    // start with those of its options (checked by validateStart).
    const initialAttributes = fork
      ? attributesOfHistory(fork.history)
      : options.attributes !== undefined
        ? startAttributes(id, definition, options.attributes)
        : undefined;
    if (initialAttributes) record.attributes = initialAttributes;
    let minted: MintedClaim | null = null;
    if (!waits && this.deps.claimsOnStart) {
      try {
        minted = ownership.foldClaim(id, { epochRaw: epochRaw ?? null, holderRaw: holderRaw ?? null });
      } catch (error) {
        return { ok: false, error: error as Error };
      }
    }
    const epoch = minted?.epoch ?? 0;
    const started = {
      workflowType: definition.name,
      version: definition.version,
      ...(parent ? { parentId: parent.id } : {}),
      ...(scheduledBy ? { scheduledBy } : {}),
      ...(fork ? { forkedFrom: fork.from } : {}),
    };
    const notes: TimelineNote[] = [
      membership && grant
        ? {
            kind: 'started',
            detail: {
              ...started,
              queue: {
                name: membership.name,
                waitedMs: 0,
                ...(membership.slot === undefined ? {} : { slot: membership.slot }),
                ...(membership.keySlot === undefined ? {} : { keySlot: membership.keySlot }),
              },
            },
          }
        : membership
          ? {
              kind: 'scheduled',
              detail: {
                ...started,
                startAt: membership.notBefore ?? now,
                queue: {
                  name: membership.name,
                  ...(membership.key === undefined ? {} : { key: membership.key }),
                  priority: membership.priority,
                },
              },
            }
          : delayed
            ? { kind: 'scheduled', detail: { ...started, startAt: record.startAt! } }
            : { kind: 'started', detail: started },
    ];
    if (minted)
      notes.push({
        kind: 'claim-acquired',
        detail: { engineId, epoch, how: parent ? 'child' : grant ? 'queue' : 'start' },
      });
    const entries = notes.map((note, seq) => timelineEntry(note, seq, { engineId, epoch, now }));
    const checkpoint: Checkpoint = { ...newCheckpoint(run, now), timelineLength: notes.length };
    const operations: Operation[] = [];
    if (fork) {
      // The first record is a commit record holding the copied history; the checkpoint stands at the
      // operation the fork runs anew, with no frontier: the run's first turn arms it (run/replay.ts).
      operations.push({
        type: 'put',
        key: keys.commitRecord(id, run, 0, 0),
        value: encodeCommitRecord(entries, fork.history),
      });
      Object.assign(checkpoint, {
        commits: 1,
        historyLength: fork.history.length,
        position: fork.from.position,
      });
    } else operations.push(timelineWrite(id, run, entries));
    operations.push(
      { type: 'put', key: keys.record(id), value: JSON.stringify(record) },
      { type: 'put', key: keys.checkpoint(id), value: JSON.stringify(checkpoint) },
      { type: 'put', key: keys.statusIndex(record.status, id), value: record.type },
    );
    if (existing && existing.record.status !== record.status)
      operations.push({ type: 'delete', key: keys.statusIndex(existing.record.status, id) });
    // Search attributes belong to a run: a new run of a finished id starts without the old run's.
    operations.push(
      ...attributeIndexWrites(escapeId(id), record.type, existing?.record.attributes, record.attributes),
    );
    // A new run starts with no buffered signals: those the finished run never consumed go with it.
    if (existing)
      for (const { key } of await this.deps.storage.scan(keys.signalPrefix(id)))
        operations.push({ type: 'delete', key });
    // Run history: the finished run is kept (its log already is, under its run number).
    if (existing)
      operations.push({
        type: 'put',
        key: keys.pastRun(id, existing.record.run),
        value: encodePastRun(existing.record, existing.checkpoint),
      });
    const timers: { key: string; timer: TimerRecord; dueAt: number }[] = [];
    const startKey = startTimerKey(record);
    if (startKey)
      timers.push({
        key: startKey,
        timer: { workflowId: id, purpose: 'start', run },
        dueAt: record.startAt!,
      });
    const executionKey = executionTimerKey(record);
    if (executionKey)
      timers.push({
        key: executionKey,
        timer: { workflowId: id, purpose: 'execution', run },
        dueAt: record.startedAt! + record.executionTimeoutMs!,
      });
    for (const { key, timer } of timers) operations.push({ type: 'put', key, value: JSON.stringify(timer) });
    const conditions: Condition[] = [
      { key: keys.record(id), expected: existing?.recordRaw ?? null },
      { key: keys.checkpoint(id), expected: existing?.checkpointRaw ?? null },
      // A new id must not meet the logs of a purge still in progress (purge.ts).
      ...(existing ? [] : [{ key: keys.purge(id), expected: null }]),
    ];
    if (membership && grant) {
      // Admitted in this batch: its slots and token, conditioned on what was read (queues.ts `directGrant`).
      const taken = grantWrites(membership, id, grant, { at: now, by: engineId });
      conditions.push(...taken.conditions);
      operations.push(...taken.operations);
    } else if (membership) {
      const waitKey = keys.queueWait(membership.name, membership.order, id);
      conditions.push({ key: waitKey, expected: null });
      operations.push({ type: 'put', key: waitKey, value: encodeWaitEntry(record) });
    }
    if (args.startKey) {
      const { membership: held, expected } = args.startKey;
      const key = keys.startKey(held.scope, held.kind, held.key);
      conditions.push({ key, expected });
      operations.push({ type: 'put', key, value: JSON.stringify({ id, run } satisfies StartKeyRecord) });
    }
    if (minted) {
      conditions.push(...minted.conditions);
      operations.push(...minted.operations);
    }
    // The guessed epoch (none: run 1) and holder (none) are conditions too where no claim names them.
    if (assumeAbsent)
      for (const key of [keys.ownerEpoch(id), keys.ownerHolder(id)])
        if (!conditions.some((condition) => condition.key === key)) conditions.push({ key, expected: null });
    return {
      ok: true,
      run,
      conditions,
      operations,
      ...(grant ? { direct: true } : {}),
      afterCommit: () => {
        for (const { dueAt } of timers) this.deps.timerArmed(dueAt);
        if (membership && grant) this.deps.admittedDirectly(membership.name, id);
        if (membership && !grant) this.deps.enqueued(membership.name);
        else if (!waits && this.deps.claimsOnStart) this.deps.claimed(id, definition.name, minted, 'start');
      },
    };
  }

  /**
   * Forks a run of `workflowId` from operation `fromPosition` (fork.ts): a start, of the next run of the same
   * id (which must be finished) or of `newId`, whose first log record carries the copied history. Under
   * workflow-lease the claim is folded in, as for a start. Everything is checked before anything is written.
   */
  async fork(workflowId: string, options: ForkOptions): Promise<{ id: string; run: number }> {
    assertWorkflowId(workflowId);
    const { fromPosition, run, newId, version } = validateForkOptions(options);
    const id = newId ?? workflowId;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const latest = await this.#read(workflowId);
      const source = await readForkSource(this.deps.storage, workflowId, run, latest);
      if (id === workflowId && latest && !isTerminal(latest.record.status))
        throw new InvalidWorkflowStateError(
          workflowId,
          latest.record.status,
          'fork into the same id',
          'Its next run can start only once it has ended: cancel or terminate it first, or fork into another id with { newId }.',
        );
      const { type } = source.record;
      const definition = this.deps.definition(type, version ?? source.record.version);
      if (!definition) throw new WorkflowNotRegisteredError(type, version ?? source.record.version);
      const { position, history } = await forkHistory(this.deps.storage, source, fromPosition);
      const { executionTimeoutMs } = source.record;
      const plan = await this.#planCreate({
        id,
        definition,
        input: source.record.input,
        options: executionTimeoutMs === undefined ? {} : { executionTimeoutMs },
        parent: undefined,
        fork: { from: { id: workflowId, run: source.record.run, position }, history },
      });
      if (!plan.ok) throw plan.error;
      const outcome = await this.#write(plan, `fork workflow '${workflowId}' into '${id}'`);
      if (outcome.ok) {
        plan.afterCommit();
        return { id, run: plan.run };
      }
    }
    throw new WorkflowClaimUnavailableError(id, null);
  }

  /**
   * The workflow a singleton or debounce key belongs to while it is active (a singleton's: not finished; a
   * debounce's: still pending), with the key's stored text (the condition of a start that replaces it).
   */
  async #activeStartKey(startKey: StartKeyMembership): Promise<{ raw: string | null; active: Read | null }> {
    const raw = await this.deps.storage.get(keys.startKey(startKey.scope, startKey.kind, startKey.key));
    const held = decodeStartKey(raw);
    if (!held) return { raw, active: null };
    const read = await this.#read(held.id).catch((error: unknown) => {
      if (error instanceof CorruptRecordError) return null;
      throw error;
    });
    const same =
      read !== null &&
      read.record.run === held.run &&
      read.record.startKey?.kind === startKey.kind &&
      read.record.startKey.key === startKey.key &&
      read.record.startKey.scope === startKey.scope;
    const active =
      same &&
      (startKey.kind === 'singleton' ? !isTerminal(read.record.status) : read.record.status === 'pending');
    return { raw, active: active ? read : null };
  }

  /**
   * A debounced start while one with its key waits: that one takes the new input and starts `windowMs` from
   * now (never later than `maxWaitMs` after it was first started). False when it changed meanwhile.
   */
  async #debounceAgain(
    read: Read,
    input: Json | undefined,
    debounce: NonNullable<StartOptions['debounce']>,
  ): Promise<boolean> {
    const { record } = read;
    const now = this.deps.clock.now();
    const latest = debounce.maxWaitMs === undefined ? Infinity : record.createdAt + debounce.maxWaitMs;
    const startAt = Math.max(now, Math.min(now + debounce.windowMs, latest));
    const next: WorkflowRecord = { ...record };
    if (input === undefined) delete next.input;
    else next.input = input;
    if (record.queue) next.queue = { ...record.queue, notBefore: startAt };
    else next.startAt = startAt;
    const detail = {
      workflowType: record.type,
      version: record.version,
      startAt,
      debounced: true,
      ...(record.queue
        ? {
            queue: {
              name: record.queue.name,
              ...(record.queue.key === undefined ? {} : { key: record.queue.key }),
              priority: record.queue.priority,
            },
          }
        : {}),
    };
    const write = changeStatus(read, next, [{ kind: 'scheduled', detail }], this.#who(0));
    if (record.queue)
      write.operations.push({
        type: 'put',
        key: keys.queueWait(record.queue.name, record.queue.order, record.id),
        value: encodeWaitEntry(next),
      });
    else {
      const before = startTimerKey(record);
      if (before) write.operations.push({ type: 'delete', key: before });
      write.operations.push({
        type: 'put',
        key: startTimerKey(next)!,
        value: JSON.stringify({
          workflowId: record.id,
          purpose: 'start',
          run: record.run,
        } satisfies TimerRecord),
      });
    }
    const outcome = await this.#write(write, `debounce workflow '${record.id}'`);
    if (!outcome.ok) return false;
    if (record.queue) this.deps.enqueued(record.queue.name);
    else this.deps.timerArmed(startAt);
    return true;
  }

  /**
   * A queue admits a waiting workflow (queues/queues.ts chose it and its slots): pending → running with the
   * claim folded in, its wait entry deleted and its slots and rate token taken, all in one batch conditioned on
   * what was read — so two engines never admit it twice, and a slot is never taken twice. Any engine that
   * declares the queue and has the definition may do it.
   */
  async admitQueued(
    workflowId: string,
    grant: QueueGrant,
  ): Promise<'admitted' | 'gone' | 'ineligible' | 'not-yet' | 'raced'> {
    const { clock, ownership, engineId } = this.deps;
    const read = await this.#read(workflowId).catch((error: unknown) => {
      if (error instanceof CorruptRecordError) return null;
      throw error;
    });
    const queue = read?.record.queue;
    if (!read || read.record.status !== 'pending' || !queue) return 'gone';
    if (!this.deps.claimsOnStart || !this.deps.definition(read.record.type, read.record.version))
      return 'ineligible';
    const now = clock.now();
    if ((queue.notBefore ?? 0) > now) return 'not-yet';
    let minted: MintedClaim | null;
    try {
      minted = ownership.foldClaim(workflowId, read);
    } catch {
      return 'raced';
    }
    const epoch = minted?.epoch ?? 0;
    const admitted: QueueMembership = {
      ...queue,
      admittedAt: now,
      ...(grant.slot ? { slot: grant.slot.index } : {}),
      ...(grant.keySlot ? { keySlot: grant.keySlot.index } : {}),
    };
    const next: WorkflowRecord = { ...read.record, status: 'running', startedAt: now, queue: admitted };
    const debounceKey = next.startKey?.kind === 'debounce' ? next.startKey : undefined;
    if (debounceKey) delete next.startKey;
    const notes: TimelineNote[] = [
      {
        kind: 'started',
        detail: {
          workflowType: next.type,
          version: next.version,
          queue: {
            name: queue.name,
            waitedMs: now - queue.enqueuedAt,
            ...(grant.slot ? { slot: grant.slot.index } : {}),
            ...(grant.keySlot ? { keySlot: grant.keySlot.index } : {}),
          },
        },
      },
    ];
    if (minted) notes.push({ kind: 'claim-acquired', detail: { engineId, epoch, how: 'queue' } });
    const write = changeStatus(read, next, notes, this.#who(epoch));
    write.conditions.push({ key: grant.waitKey, expected: grant.waitRaw });
    write.operations.push({ type: 'delete', key: grant.waitKey });
    const taken = grantWrites(queue, workflowId, grant, { at: now, by: engineId });
    write.conditions.push(...taken.conditions);
    write.operations.push(...taken.operations);
    const executionKey = startsRunning(write, next, debounceKey);
    const outcome = await this.#write(
      write,
      `admit workflow '${workflowId}' from queue '${queue.name}'`,
      minted,
    );
    if (!outcome.ok) return 'raced';
    if (executionKey) this.deps.timerArmed(now + next.executionTimeoutMs!);
    this.deps.claimed(workflowId, next.type, minted, 'start');
    return 'admitted';
  }

  /** A delayed start fell due: flip pending → running with the claim folded in. Any engine may do it. */
  async startPending(workflowId: string): Promise<boolean> {
    const { clock, ownership, engineId } = this.deps;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const read = await this.#read(workflowId);
      if (!read || read.record.status !== 'pending') return false;
      if (!this.deps.claimsOnStart) return false;
      if (!this.deps.definition(read.record.type, read.record.version)) return false;
      const now = clock.now();
      if ((read.record.startAt ?? 0) > now) return false;
      let minted: MintedClaim | null;
      try {
        minted = ownership.foldClaim(workflowId, read);
      } catch {
        return false;
      }
      const epoch = minted?.epoch ?? 0;
      if (read.record.queue) return false; // a queued workflow starts when its queue admits it
      const next: WorkflowRecord = { ...read.record, status: 'running', startedAt: now };
      // A debounced start is no longer joinable once it runs: its key goes.
      const debounceKey = next.startKey?.kind === 'debounce' ? next.startKey : undefined;
      if (debounceKey) delete next.startKey;
      const notes: TimelineNote[] = [
        { kind: 'started', detail: { workflowType: next.type, version: next.version, delayed: true } },
      ];
      if (minted) notes.push({ kind: 'claim-acquired', detail: { engineId, epoch, how: 'delayed-start' } });
      const write = changeStatus(read, next, notes, this.#who(epoch));
      const startKey = startTimerKey(read.record);
      if (startKey) write.operations.push({ type: 'delete', key: startKey });
      const executionKey = startsRunning(write, next, debounceKey);
      const outcome = await this.#write(write, `start delayed workflow '${workflowId}'`, minted);
      if (outcome.ok) {
        if (executionKey) this.deps.timerArmed(now + next.executionTimeoutMs!);
        this.deps.claimed(workflowId, next.type, minted, 'start');
        return true;
      }
    }
    return false;
  }

  // -------------------------------------------------------------------------------------------------------
  // External rotation

  /**
   * Terminate, suspend or time out a workflow. Resolves with the new record, or null when the workflow was
   * already in a state where the transition does not apply (then nothing is written).
   */
  async rotate(
    workflowId: string,
    target: 'terminated' | 'suspended' | 'timed-out',
    reason?: string,
  ): Promise<WorkflowRecord | null> {
    assertWorkflowId(workflowId);
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 1000))
      throw new InvalidArgumentError('reason must be a string of at most 1000 characters.');
    const { clock, ownership } = this.deps;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const read = await this.#read(workflowId);
      if (!read) throw new WorkflowNotFoundError(workflowId);
      const status = read.record.status;
      const allowed: WorkflowStatus[] =
        target === 'suspended' ? ['running'] : ['running', 'pending', 'suspended'];
      if (!allowed.includes(status)) {
        // terminate is idempotent on a finished workflow; suspend is not (it would say something false)
        if (target === 'timed-out' || (target === 'terminated' && isTerminal(status))) return null;
        throw new InvalidWorkflowStateError(
          workflowId,
          status,
          target === 'suspended' ? 'suspend' : 'terminate',
        );
      }
      const now = clock.now();
      const rotation = ownership.rotation(workflowId, read, target);
      const next: WorkflowRecord = { ...read.record, status: target, ...(reason ? { reason } : {}) };
      if (target !== 'suspended') next.endedAt = now;
      const detail = { ...(reason ? { reason } : {}), ...(rotation ? { newEpoch: rotation.epoch } : {}) };
      const write = changeStatus(
        read,
        next,
        [{ kind: target, detail }],
        this.#who(rotation?.epoch ?? 0),
        target === 'suspended' ? {} : { frontier: null },
      );
      for (const key of frontierTimerKeys(read.checkpoint)) write.operations.push({ type: 'delete', key });
      if (target !== 'suspended') {
        const executionKey = executionTimerKey(read.record);
        if (executionKey) write.operations.push({ type: 'delete', key: executionKey });
        const startKey = startTimerKey(read.record);
        if (startKey) write.operations.push({ type: 'delete', key: startKey });
      }
      let outcome: WriteOutcome;
      try {
        outcome = await this.#write(write, `${target} workflow '${workflowId}'`, rotation);
      } catch (error) {
        // The answer was lost, not necessarily the write: if it landed, this engine lets the workflow go as
        // if it had been told (nobody else would tell it — a holder's own rotation leaves it no notice).
        if (await this.#landed(workflowId, write)) this.deps.rotated(workflowId, next);
        throw error;
      }
      if (outcome.ok) {
        this.deps.rotated(workflowId, next);
        return next;
      }
    }
    throw new InvalidWorkflowStateError(
      workflowId,
      'changing too fast',
      target === 'suspended' ? 'suspend' : 'terminate',
    );
  }

  // -------------------------------------------------------------------------------------------------------
  // resume

  /**
   * Suspended → running with the claim folded in, driven on this engine. For a running workflow with no
   * live owner, claims it here; one with a live owner elsewhere throws `WorkflowClaimUnavailableError`.
   */
  async resume(workflowId: string): Promise<void> {
    assertWorkflowId(workflowId);
    const { ownership, engineId, clock } = this.deps;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const read = await this.#read(workflowId);
      if (!read) throw new WorkflowNotFoundError(workflowId);
      const { record } = read;
      if (!this.deps.definition(record.type)) throw new WorkflowNotRegisteredError(record.type);
      if (record.status === 'running') return ownership.claimForResume(workflowId);
      if (record.status !== 'suspended')
        throw new InvalidWorkflowStateError(workflowId, record.status, 'resume');
      const minted = ownership.foldClaim(workflowId, read);
      const epoch = minted?.epoch ?? 0;
      const next: WorkflowRecord = { ...record, status: 'running' };
      delete next.reason;
      const notes: TimelineNote[] = [{ kind: 'resumed', detail: {} }];
      if (minted) notes.push({ kind: 'claim-acquired', detail: { engineId, epoch, how: 'resume' } });
      const write = changeStatus(read, next, notes, this.#who(epoch));
      const dueTimes: number[] = [];
      const frontier = read.checkpoint.frontier;
      for (const leaf of frontier?.leaves ?? []) {
        if (!leaf.timerKey || leaf.done || leaf.dueAt === undefined) continue;
        const purpose: TimerRecord['purpose'] =
          leaf.kind === 'sleep' ? 'sleep' : leaf.kind === 'activity' ? 'retry' : 'timeout';
        write.operations.push({
          type: 'put',
          key: leaf.timerKey,
          value: JSON.stringify({
            workflowId,
            purpose,
            run: record.run,
            pos: frontier!.pos,
            member: leaf.member,
          } satisfies TimerRecord),
        });
        dueTimes.push(leaf.dueAt);
      }
      const outcome = await this.#write(write, `resume workflow '${workflowId}'`, minted);
      if (outcome.ok) {
        for (const dueAt of dueTimes) this.deps.timerArmed(Math.max(dueAt, clock.now()));
        this.deps.claimed(workflowId, record.type, minted, 'resume');
        return;
      }
      const holder = readHolder((await this.deps.storage.get(keys.ownerHolder(workflowId))) ?? null);
      if (holder?.holder)
        throw new WorkflowClaimUnavailableError(workflowId, {
          engineId: holder.holder.engineId,
          epoch: holder.holder.epoch,
          expiresAt: holder.holder.expiresAt,
        });
    }
    throw new WorkflowClaimUnavailableError(workflowId, null);
  }

  // -------------------------------------------------------------------------------------------------------
  // cancel, signal

  /** Stores a cooperative cancellation request. A pending workflow is cancelled at once. */
  async cancel(workflowId: string, reason?: string): Promise<'requested' | 'cancelled' | 'already-finished'> {
    assertWorkflowId(workflowId);
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 1000))
      throw new InvalidArgumentError('reason must be a string of at most 1000 characters.');
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const read = await this.#read(workflowId);
      if (!read) throw new WorkflowNotFoundError(workflowId);
      if (isTerminal(read.record.status)) return 'already-finished';
      const now = this.deps.clock.now();
      if (read.record.status === 'pending') {
        const next: WorkflowRecord = {
          ...read.record,
          status: 'cancelled',
          endedAt: now,
          ...(reason ? { reason } : {}),
        };
        const write = changeStatus(
          read,
          next,
          [{ kind: 'cancelled', detail: reason ? { reason } : {} }],
          this.#who(0),
          { frontier: null },
        );
        const startKey = startTimerKey(read.record);
        if (startKey) write.operations.push({ type: 'delete', key: startKey });
        const outcome = await this.#write(write, `cancel pending workflow '${workflowId}'`);
        if (outcome.ok) {
          this.deps.rotated(workflowId, next);
          return 'cancelled';
        }
        continue;
      }
      const request: CancelRequest = {
        ...(reason ? { reason } : {}),
        requestedAt: now,
        requestedBy: this.deps.engineId,
      };
      const outcome = await this.#write(
        {
          conditions: [],
          operations: [{ type: 'put', key: keys.cancelRequest(workflowId), value: JSON.stringify(request) }],
        },
        `request cancellation of '${workflowId}'`,
      );
      if (outcome.ok) return 'requested';
    }
    throw new InvalidWorkflowStateError(workflowId, 'changing too fast', 'cancel');
  }

  /** Buffers a signal durably, in send order (a compare-and-swap counter gives each its sequence number). */
  async signal(workflowId: string, name: string, payload?: unknown): Promise<void> {
    assertWorkflowId(workflowId);
    assertHandlerName(name, 'Signal');
    const text = encodePayload(
      payload,
      `Payload of signal '${name}' to workflow '${workflowId}'`,
      this.deps.maxPayloadBytes,
    );
    const recordRaw = await this.deps.storage.get(keys.record(workflowId));
    if (!recordRaw) throw new WorkflowNotFoundError(workflowId);
    const record = decodeRecord(keys.record(workflowId), recordRaw);
    if (isTerminal(record.status))
      throw new InvalidWorkflowStateError(workflowId, record.status, `signal '${name}'`);
    // In the workflow's trace, linked to the sender's.
    const span = this.deps.tracing.start(
      'shuttle.signal',
      storedTrace(record.trace),
      {
        'shuttle.workflow.id': workflowId,
        'shuttle.workflow.type': record.type,
        'shuttle.workflow.run': record.run,
        'shuttle.signal.name': name,
        'shuttle.engine.id': this.deps.engineId,
      },
      'producer',
      'active',
    );
    try {
      await this.#bufferSignal(workflowId, name, text);
    } catch (error) {
      span.recordError(error);
      throw error;
    } finally {
      span.end();
    }
  }

  async #bufferSignal(workflowId: string, name: string, text: string | undefined): Promise<void> {
    const counterKey = keys.signalCounter(workflowId);
    for (let attempt = 0; attempt < 50; attempt++) {
      const counterRaw = await this.deps.storage.get(counterKey);
      const seq = counterRaw === null ? 0 : Number(counterRaw);
      if (!Number.isSafeInteger(seq) || seq < 0)
        throw new CorruptRecordError(counterKey, 'signal counter is not a non-negative integer');
      const signal: SignalRecord = {
        name,
        ...(text === undefined ? {} : { payload: JSON.parse(text) as Json }),
        sentAt: this.deps.clock.now(),
        sentBy: this.deps.engineId,
      };
      const outcome = await this.#write(
        {
          conditions: [{ key: counterKey, expected: counterRaw }],
          operations: [
            { type: 'put', key: keys.signal(workflowId, seq), value: JSON.stringify(signal) },
            { type: 'put', key: counterKey, value: String(seq + 1) },
          ],
        },
        `signal '${name}' to '${workflowId}'`,
      );
      if (outcome.ok) return;
    }
    throw new InvalidWorkflowStateError(workflowId, 'receiving signals too fast', `signal '${name}'`);
  }
}

/** `plan` with `span` ended when it is committed (or at once, when it failed). */
function endingSpan(plan: CreatePlan, span: TracerSpan): CreatePlan {
  if (!plan.ok) {
    span.recordError(plan.error);
    span.end();
    return plan;
  }
  span.setAttributes({ 'shuttle.workflow.run': plan.run });
  const { afterCommit } = plan;
  return {
    ...plan,
    afterCommit: () => {
      span.end();
      afterCommit();
    },
  };
}

function stripped(error: unknown): SerializedError {
  const serialized = serializeError(error);
  delete serialized.stack;
  return serialized;
}
