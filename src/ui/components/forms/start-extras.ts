/**
 * The start dialog's optional extras, without React: the queue to start onto, with its concurrency key and
 * priority (blank: the definition's default queue, no key, priority 5), an idempotency key (a repeated key
 * returns the run it started instead of starting another), and a signal sent with the start (signal-with-start: the workflow of
 * the given id gets the signal if it runs, and is started with the signal already buffered if it does not).
 * `planStart` checks them against the other start options and says, in the engine's terms, what is wrong
 * before a round trip; the engine validates everything again.
 */
import type { StartOptions } from '../../../public';
import type { StartPlan } from '../../data/start-actions';
import { parseJsonInput } from './start-form';

/** The engine's limit on an idempotency key's length. */
export const maxIdempotencyKeyLength = 200;
/** The engine's limit on a concurrency key's length. */
export const maxConcurrencyKeyLength = 200;
/** The engine's limit on a signal name's length. */
export const maxSignalNameLength = 200;

export type StartExtras = {
  /** A declared queue's name; empty: the definition's default queue (if it has one). */
  queue: string;
  /** As typed; empty for none. */
  concurrencyKey: string;
  /** '1' (runs first) to '10'; empty: the default, 5. */
  priority: string;
  /** As typed; empty for none. */
  idempotencyKey: string;
  /** Send a signal with the start (signal-with-start). */
  withSignal: boolean;
  signalName: string;
  /** JSON, as typed; empty for no payload. */
  signalPayload: string;
};

export const noStartExtras: StartExtras = {
  queue: '',
  concurrencyKey: '',
  priority: '',
  idempotencyKey: '',
  withSignal: false,
  signalName: '',
  signalPayload: '',
};

export type ExtrasProblem = {
  field:
    | 'queue'
    | 'concurrencyKey'
    | 'priority'
    | 'idempotencyKey'
    | 'signalName'
    | 'signalPayload'
    | 'workflowId';
  message: string;
};

export type { StartPlan };

/** The call the start options and extras describe, or the first thing wrong with them. */
export function planStart(
  startOptions: StartOptions,
  extras: StartExtras,
): { ok: true; plan: StartPlan } | { ok: false; problem: ExtrasProblem } {
  const queued = queueOptions(extras);
  if (!queued.ok) return queued;
  const options: StartOptions = { ...startOptions, ...queued.options };
  const key = extras.idempotencyKey;
  if (key.length > 0 && key.trim().length === 0)
    return problem(
      'idempotencyKey',
      'The idempotency key cannot be only spaces; leave it empty to start without one.',
    );
  if (key.length > maxIdempotencyKeyLength)
    return problem(
      'idempotencyKey',
      `The idempotency key has ${key.length} characters; the limit is ${maxIdempotencyKeyLength}.`,
    );
  if (!extras.withSignal)
    return {
      ok: true,
      plan: { kind: 'start', options: key ? { ...options, idempotencyKey: key } : options },
    };

  const name = extras.signalName.trim();
  if (!name)
    return problem(
      'signalName',
      'Name the signal to send with the start (e.g. approve), or untick “Send a signal with the start”.',
    );
  if (name.length > maxSignalNameLength)
    return problem(
      'signalName',
      `The signal name has ${name.length} characters; the limit is ${maxSignalNameLength}.`,
    );
  const payload = parseJsonInput(extras.signalPayload);
  if (!payload.ok)
    return problem(
      'signalPayload',
      `The signal payload is not valid JSON${payload.line !== null ? ` (line ${payload.line}, column ${payload.column})` : ''}: ${payload.message}.`,
    );
  if (options.id === undefined)
    return problem(
      'workflowId',
      'Signal-with-start needs a workflow id: the signal goes to the workflow of that id if it runs, and starts it otherwise. Enter a workflow id.',
    );
  if (key)
    return problem(
      'idempotencyKey',
      'Signal-with-start takes no idempotency key: its workflow id already makes it idempotent. Clear the key, or untick the signal.',
    );
  return {
    ok: true,
    plan: {
      kind: 'signal-with-start',
      options: { ...options, id: options.id },
      signalName: name,
      ...(payload.empty ? {} : { payload: payload.value }),
    },
  };
}

/** The queue, concurrency key and priority of the start, or what is wrong with one of them. */
function queueOptions(
  extras: StartExtras,
): { ok: true; options: StartOptions } | { ok: false; problem: ExtrasProblem } {
  const options: StartOptions = {};
  if (extras.queue !== '') {
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(extras.queue))
      return problem(
        'queue',
        `A queue name is 1 to 100 letters, digits, '_', '.' or '-'; got '${extras.queue}'.`,
      );
    options.queue = extras.queue;
  }
  const key = extras.concurrencyKey;
  if (key !== '') {
    if (key.trim().length === 0)
      return problem(
        'concurrencyKey',
        'The concurrency key cannot be only spaces; leave it empty to start without one.',
      );
    if (key.length > maxConcurrencyKeyLength)
      return problem(
        'concurrencyKey',
        `The concurrency key has ${key.length} characters; the limit is ${maxConcurrencyKeyLength}.`,
      );
    options.concurrencyKey = key;
  }
  if (extras.priority !== '') {
    const priority = Number(extras.priority);
    if (!Number.isInteger(priority) || priority < 1 || priority > 10)
      return problem(
        'priority',
        `The priority is a whole number from 1 (runs first) to 10; got '${extras.priority}'.`,
      );
    options.priority = priority;
  }
  return { ok: true, options };
}

function problem(field: ExtrasProblem['field'], message: string): { ok: false; problem: ExtrasProblem } {
  return { ok: false, problem: { field, message } };
}
