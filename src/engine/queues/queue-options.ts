/**
 * Workflow queues: what a queue declares (`createEngine({ queues })`), what a start onto one asks for
 * (`start(…, { queue, concurrencyKey, priority })`, and `singleton` / `debounce`, which work with or without a
 * queue), and what the workflow record keeps of it. Pure: validation and the admission order only.
 *
 * Everything is checked before anything is read or written; a bad value is an `InvalidOptionsError` that
 * quotes it and says what is allowed.
 */
import { InvalidOptionsError } from '../errors';

/** A queue, declared once in code with the engine's options (every engine sharing the store declares it). */
export type QueueOptions = {
  /**
   * How many of the queue's workflows may be admitted and not finished at once, across every engine sharing
   * the store (a parked workflow counts: it holds its slot until it ends). Default: no limit.
   */
  concurrency?: number;
  /** The same, per `concurrencyKey` of the start (e.g. one per customer). Default: no limit. */
  perKeyConcurrency?: number;
  /**
   * How many of the queue's workflows one engine drives at once. An engine at its limit admits none; one
   * that takes over more (a dead peer's) lets the extra go at once, before running any of their code.
   */
  perEngineConcurrency?: number;
  /** At most `limit` admissions in any `periodMs` window, across every engine. */
  rateLimit?: { limit: number; periodMs: number };
  /**
   * How much waiting one priority level is worth, in ms: a workflow of priority p is ordered as if it had been
   * enqueued (p − 1) × priorityStepMs later. Priorities order the queue; nothing waits forever. Default 60,000.
   */
  priorityStepMs?: number;
};

/**
 * A queue declared in a module (`defineQueue`): what `createEngine({ queues: [...] })` takes, and what the
 * server's `--workflows` loader and the studio pick up from a module's exports beside its workflows.
 */
export type QueueDefinition = {
  readonly kind: 'shuttle-queue';
  readonly name: string;
  readonly options: Readonly<QueueOptions>;
};

/**
 * Declares a queue in code, checked at once (`InvalidOptionsError`).
 *
 * @example
 * export const payments = defineQueue('payments', { concurrency: 10, perKeyConcurrency: 1 });
 * // createEngine({ queues: [payments], … }); start(charge, input, { queue: 'payments', concurrencyKey: customerId })
 */
export function defineQueue(name: string, options: QueueOptions = {}): QueueDefinition {
  resolveQueues({ [assertQueueName(name)]: options });
  return Object.freeze({ kind: 'shuttle-queue', name, options: Object.freeze({ ...options }) });
}

export function isQueueDefinition(value: unknown): value is QueueDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as QueueDefinition).kind === 'shuttle-queue' &&
    typeof (value as QueueDefinition).name === 'string'
  );
}

/** A validated queue declaration. */
export type QueueDeclaration = {
  name: string;
  concurrency: number | null;
  perKeyConcurrency: number | null;
  perEngineConcurrency: number | null;
  rateLimit: { limit: number; periodMs: number } | null;
  priorityStepMs: number;
};

/** What the workflow record keeps of its queue (`record.queue`). */
export type QueueMembership = {
  name: string;
  /** The start's `concurrencyKey`. */
  key?: string;
  /** 1 (first) to 10; default 5. */
  priority: number;
  enqueuedAt: number;
  /** Its place in the queue (the wait key's order: `admissionOrder`). */
  order: number;
  /** It may not be admitted before this time (a delayed or debounced start). */
  notBefore?: number;
  /** Once admitted: when, by which engine, and the slots it holds until it ends. */
  admittedAt?: number;
  slot?: number;
  keySlot?: number;
};

/** A singleton or debounce key a workflow was started with (`record.startKey`): freed when it ends. */
export type StartKeyMembership = { scope: string; kind: 'singleton' | 'debounce'; key: string };

/** The queue part of `StartOptions`. */
export type QueueStartOptions = {
  /** Start onto this queue (declared in `createEngine({ queues })`). Default: the definition's `queue`. */
  queue?: string;
  /** The queue's `perKeyConcurrency` counts starts with the same key together. 1–200 characters. */
  concurrencyKey?: string;
  /** 1 (runs first) to 10; default 5. Needs a queue. */
  priority?: number;
  /**
   * At most one workflow with this key waiting or running at once (in its queue, or per workflow type without
   * one): another start with the key returns that workflow (`started: false`), or with `ifActive: 'refuse'`
   * fails with `SingletonConflictError`.
   */
  singleton?: { key: string; ifActive?: 'join' | 'refuse' };
  /**
   * Starts the workflow `windowMs` after the last start with this key: a start while one waits replaces its
   * input and moves its start back (`started: false`, its id), never past `maxWaitMs` after the first.
   */
  debounce?: { key: string; windowMs: number; maxWaitMs?: number };
};

export const queueNamePattern = /^[A-Za-z0-9_.-]{1,100}$/;
export const defaultPriority = 5;
export const defaultPriorityStepMs = 60_000;

function quote(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function positiveInteger(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
    throw new InvalidOptionsError(`${what} must be a positive whole number; got ${quote(value)}.`);
  return value;
}

function shortString(what: string, value: unknown, max = 200): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new InvalidOptionsError(`${what} must be a string of 1 to ${max} characters; got ${quote(value)}.`);
  return value;
}

function onlyKeys(what: string, value: object, allowed: readonly string[]): void {
  for (const key of Object.keys(value))
    if (!allowed.includes(key))
      throw new InvalidOptionsError(
        `Unknown ${what} option '${key}'; the options are: ${allowed.join(', ')}.`,
      );
}

export function assertQueueName(name: unknown, what = 'A queue name'): string {
  if (typeof name !== 'string' || !queueNamePattern.test(name))
    throw new InvalidOptionsError(
      `${what} must be 1 to 100 letters, digits, '_', '.' or '-'; got ${quote(name)}.`,
    );
  return name;
}

/** `createEngine({ queues })`, validated. */
export function resolveQueues(queues: unknown): Map<string, QueueDeclaration> {
  const resolved = new Map<string, QueueDeclaration>();
  if (queues === undefined) return resolved;
  if (Array.isArray(queues)) {
    const record: Record<string, QueueOptions> = {};
    for (const [index, queue] of (queues as unknown[]).entries()) {
      if (!isQueueDefinition(queue))
        throw new InvalidOptionsError(
          `options.queues[${index}] is not a queue made with defineQueue(name, options); got ${quote(queue)}.`,
        );
      if (queue.name in record)
        throw new InvalidOptionsError(
          `options.queues declares queue '${queue.name}' twice; declare each once.`,
        );
      record[queue.name] = queue.options;
    }
    return resolveQueues(record);
  }
  if (typeof queues !== 'object' || queues === null || Array.isArray(queues))
    throw new InvalidOptionsError(
      `options.queues must be an object of queue name → { concurrency, perKeyConcurrency, perEngineConcurrency, rateLimit, priorityStepMs }; got ${quote(queues)}.`,
    );
  for (const [name, options] of Object.entries(queues as Record<string, unknown>)) {
    assertQueueName(name, `Queue name '${name}' in options.queues`);
    const what = `options.queues.${name}`;
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new InvalidOptionsError(
        `${what} must be an object like { concurrency: 10 }; got ${quote(options)}.`,
      );
    onlyKeys(`queue '${name}'`, options, [
      'concurrency',
      'perKeyConcurrency',
      'perEngineConcurrency',
      'rateLimit',
      'priorityStepMs',
    ]);
    const o = options as QueueOptions;
    const optional = (field: keyof QueueOptions) =>
      o[field] === undefined ? null : positiveInteger(`${what}.${field}`, o[field]);
    let rateLimit: QueueDeclaration['rateLimit'] = null;
    if (o.rateLimit !== undefined) {
      if (typeof o.rateLimit !== 'object' || o.rateLimit === null)
        throw new InvalidOptionsError(
          `${what}.rateLimit must be { limit, periodMs }, e.g. { limit: 100, periodMs: 60000 }; got ${quote(o.rateLimit)}.`,
        );
      onlyKeys(`${what}.rateLimit`, o.rateLimit, ['limit', 'periodMs']);
      const limit = positiveInteger(`${what}.rateLimit.limit`, o.rateLimit.limit);
      if (limit > 10_000)
        throw new InvalidOptionsError(`${what}.rateLimit.limit must be at most 10000; got ${limit}.`);
      rateLimit = { limit, periodMs: positiveInteger(`${what}.rateLimit.periodMs`, o.rateLimit.periodMs) };
    }
    const concurrency = optional('concurrency');
    const perKeyConcurrency = optional('perKeyConcurrency');
    for (const [field, value] of [
      ['concurrency', concurrency],
      ['perKeyConcurrency', perKeyConcurrency],
    ] as const)
      if (value !== null && value > 100_000)
        throw new InvalidOptionsError(`${what}.${field} must be at most 100000; got ${value}.`);
    resolved.set(name, {
      name,
      concurrency,
      perKeyConcurrency,
      perEngineConcurrency: optional('perEngineConcurrency'),
      rateLimit,
      priorityStepMs:
        o.priorityStepMs === undefined
          ? defaultPriorityStepMs
          : positiveInteger(`${what}.priorityStepMs`, o.priorityStepMs),
    });
  }
  return resolved;
}

/** The start options of this module, validated (the queue's existence is checked by the caller). */
export function validateQueueStart(options: QueueStartOptions): void {
  if (options.queue !== undefined) assertQueueName(options.queue, 'start option queue');
  if (options.concurrencyKey !== undefined)
    shortString('start option concurrencyKey', options.concurrencyKey);
  if (options.priority !== undefined) {
    const p = options.priority;
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 10)
      throw new InvalidOptionsError(
        `start option priority must be a whole number from 1 (runs first) to 10; got ${quote(p)}.`,
      );
  }
  const { singleton, debounce } = options;
  if (singleton !== undefined) {
    if (typeof singleton !== 'object' || singleton === null)
      throw new InvalidOptionsError(
        `start option singleton must be { key, ifActive? }, e.g. { key: 'customer-42' }; got ${quote(singleton)}.`,
      );
    onlyKeys('singleton', singleton, ['key', 'ifActive']);
    shortString('start option singleton.key', singleton.key);
    if (singleton.ifActive !== undefined && singleton.ifActive !== 'join' && singleton.ifActive !== 'refuse')
      throw new InvalidOptionsError(
        `start option singleton.ifActive must be 'join' (return the active workflow) or 'refuse'; got ${quote(singleton.ifActive)}.`,
      );
  }
  if (debounce !== undefined) {
    if (typeof debounce !== 'object' || debounce === null)
      throw new InvalidOptionsError(
        `start option debounce must be { key, windowMs, maxWaitMs? }, e.g. { key: 'customer-42', windowMs: 5000 }; got ${quote(debounce)}.`,
      );
    onlyKeys('debounce', debounce, ['key', 'windowMs', 'maxWaitMs']);
    shortString('start option debounce.key', debounce.key);
    positiveInteger('start option debounce.windowMs', debounce.windowMs);
    if (debounce.maxWaitMs !== undefined) {
      positiveInteger('start option debounce.maxWaitMs', debounce.maxWaitMs);
      if (debounce.maxWaitMs < debounce.windowMs)
        throw new InvalidOptionsError(
          `start option debounce.maxWaitMs (${debounce.maxWaitMs}) must be at least its windowMs (${debounce.windowMs}).`,
        );
    }
  }
  if (singleton !== undefined && debounce !== undefined)
    throw new InvalidOptionsError(
      'A start takes singleton or debounce, not both: a debounced start already joins the one that waits.',
    );
}

/**
 * A waiting workflow's place: its enqueue time plus its priority's weight. Within a priority this is enqueue
 * order (FIFO); across priorities a more urgent workflow overtakes those enqueued at most
 * (Δpriority × priorityStepMs) before it, so every workflow is eventually first.
 */
export function admissionOrder(enqueuedAt: number, priority: number, priorityStepMs: number): number {
  return enqueuedAt + (priority - 1) * priorityStepMs;
}
