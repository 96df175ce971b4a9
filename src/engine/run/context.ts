/**
 * The `ctx` handed to workflow generators. Each method validates its arguments (a bad argument throws inside
 * the workflow, failing it with a clear message) and returns an `Operation` describing the command; the run
 * (workflow-run.ts) interprets the commands the generator yields.
 */
import { activityGroupPattern } from '../activity-limits';
import { attributeChanges, type AttributeDeclarations, type AttributeInput } from '../attributes';
import type { JsonObject } from '../codec';
import { assertWorkflowId } from '../ids';
import {
  Operation,
  workflowTypeOf,
  type ActivityFunction,
  type ActivityOptions,
  type AnyWorkflowDefinition,
  type ChildOptions,
  type ContinueAsNewOptions,
  type LeafCommand,
  type WorkflowContext,
} from '../workflow';

function assertName(what: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200)
    throw new TypeError(
      `${what} name must be a non-empty string of at most 200 characters; got ${JSON.stringify(name)}.`,
    );
}

function assertDuration(what: string, ms: unknown, allowZero = true): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || (!allowZero && ms === 0))
    throw new TypeError(
      `${what} must be a finite number of milliseconds ≥ ${allowZero ? 0 : 1}; got ${String(ms)}.`,
    );
}

function assertActivityOptions(name: string, options: ActivityOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`Activity '${name}': options must be an object.`);
  if (options.timeoutMs !== undefined)
    assertDuration(`Activity '${name}' timeoutMs`, options.timeoutMs, false);
  if (options.heartbeatTimeoutMs !== undefined) {
    assertDuration(`Activity '${name}' heartbeatTimeoutMs`, options.heartbeatTimeoutMs, false);
    if (options.completion === 'external')
      throw new TypeError(
        `Activity '${name}': heartbeatTimeoutMs does not apply to completion 'external' (whoever completes it cannot heartbeat); use timeoutMs.`,
      );
  }
  if (
    options.completion !== undefined &&
    options.completion !== 'function' &&
    options.completion !== 'external'
  )
    throw new TypeError(
      `Activity '${name}': completion must be 'function' or 'external'; got ${JSON.stringify(options.completion)}.`,
    );
  if (
    options.limit !== undefined &&
    (typeof options.limit !== 'string' || !activityGroupPattern.test(options.limit))
  )
    throw new TypeError(
      `Activity '${name}': limit must be a group name of 1–100 characters of A-Z a-z 0-9 _ . : -; got ${JSON.stringify(options.limit)}.`,
    );
  const retry = options.retry;
  if (retry === undefined) return;
  if (retry.maxAttempts !== undefined && (!Number.isSafeInteger(retry.maxAttempts) || retry.maxAttempts < 1))
    throw new TypeError(
      `Activity '${name}': retry.maxAttempts must be an integer ≥ 1; got ${String(retry.maxAttempts)}.`,
    );
  if (retry.initialIntervalMs !== undefined)
    assertDuration(`Activity '${name}' retry.initialIntervalMs`, retry.initialIntervalMs);
  if (retry.maxIntervalMs !== undefined)
    assertDuration(`Activity '${name}' retry.maxIntervalMs`, retry.maxIntervalMs);
  if (
    retry.backoffCoefficient !== undefined &&
    (typeof retry.backoffCoefficient !== 'number' || !(retry.backoffCoefficient >= 1))
  )
    throw new TypeError(
      `Activity '${name}': retry.backoffCoefficient must be a number ≥ 1; got ${String(retry.backoffCoefficient)}.`,
    );
  if (
    retry.nonRetryable !== undefined &&
    (!Array.isArray(retry.nonRetryable) || retry.nonRetryable.some((n) => typeof n !== 'string'))
  )
    throw new TypeError(`Activity '${name}': retry.nonRetryable must be an array of error names.`);
}

function leafOf(operation: unknown, what: string): LeafCommand {
  if (!(operation instanceof Operation))
    throw new TypeError(
      `${what} takes operations created by ctx (e.g. ctx.activity(…)), not ${typeof operation}.`,
    );
  const command = operation.command;
  if (
    command.kind === 'all' ||
    command.kind === 'race' ||
    command.kind === 'now' ||
    command.kind === 'random' ||
    command.kind === 'uuid' ||
    command.kind === 'patch' ||
    command.kind === 'continue-as-new' ||
    command.kind === 'signal-workflow' ||
    command.kind === 'cancel-workflow' ||
    command.kind === 'set-attributes'
  )
    throw new TypeError(
      `${what} members must be activities, sleeps, signal waits, waitUntil or children; got ${command.kind}.`,
    );
  return command;
}

export type ContextHost = {
  readonly workflowId: string;
  readonly workflowType: string;
  readonly version: number;
  readonly state: JsonObject;
  readonly isReplaying: boolean;
  /** The definition's declared search attributes (`ctx.setAttributes` takes only these). */
  readonly attributes?: AttributeDeclarations;
};

export function createContext(host: ContextHost): WorkflowContext {
  const ctx: WorkflowContext = {
    get workflowId() {
      return host.workflowId;
    },
    get workflowType() {
      return host.workflowType;
    },
    get version() {
      return host.version;
    },
    get state() {
      return host.state;
    },
    get isReplaying() {
      return host.isReplaying;
    },
    activity<T>(name: string, fn: ActivityFunction<T>, options: ActivityOptions = {}) {
      assertName('Activity', name);
      if (typeof fn !== 'function') throw new TypeError(`Activity '${name}' needs a function to run.`);
      assertActivityOptions(name, options);
      return new Operation<Awaited<T>>({
        kind: 'activity',
        name,
        fn: fn as ActivityFunction<unknown>,
        options,
      });
    },
    sleep(ms: number) {
      assertDuration('ctx.sleep duration', ms);
      return new Operation<void>({ kind: 'sleep', name: 'sleep', durationMs: ms });
    },
    waitForSignal<T>(name: string, options: { timeoutMs?: number } = {}) {
      assertName('Signal', name);
      if (options.timeoutMs !== undefined)
        assertDuration(`waitForSignal('${name}') timeoutMs`, options.timeoutMs);
      return new Operation<T | undefined>({ kind: 'signal', name, timeoutMs: options.timeoutMs });
    },
    waitUntil(predicate: () => boolean, options: { timeoutMs?: number } = {}) {
      if (typeof predicate !== 'function') throw new TypeError('ctx.waitUntil needs a predicate function.');
      if (options.timeoutMs !== undefined) assertDuration('waitUntil timeoutMs', options.timeoutMs);
      return new Operation<boolean>({
        kind: 'until',
        name: 'until',
        predicate,
        timeoutMs: options.timeoutMs,
      });
    },
    startChild(workflow: AnyWorkflowDefinition | string, input: unknown, options: ChildOptions = {}) {
      const type = workflowTypeOf(workflow);
      assertName('Child workflow type', type);
      if (
        options.parentClosePolicy !== undefined &&
        !['await', 'abandon', 'terminate'].includes(options.parentClosePolicy)
      )
        throw new TypeError(
          `startChild('${type}'): parentClosePolicy must be 'await', 'abandon' or 'terminate'.`,
        );
      if (options.id !== undefined) assertName('Child workflow id', options.id);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return new Operation<any>({ kind: 'child', name: type, input, options });
    },
    all(operations) {
      if (!Array.isArray(operations) || operations.length === 0)
        throw new TypeError('ctx.all needs a non-empty array of operations.');
      const members = operations.map((operation) => leafOf(operation, 'ctx.all'));
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return new Operation<any>({ kind: 'all', name: 'all', members });
    },
    race(operations) {
      if (!Array.isArray(operations) || operations.length === 0)
        throw new TypeError('ctx.race needs a non-empty array of operations.');
      const members = operations.map((operation) => leafOf(operation, 'ctx.race'));
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return new Operation<any>({ kind: 'race', name: 'race', members });
    },
    now() {
      return new Operation<number>({ kind: 'now', name: 'now' });
    },
    random() {
      return new Operation<number>({ kind: 'random', name: 'random' });
    },
    uuid() {
      return new Operation<string>({ kind: 'uuid', name: 'uuid' });
    },
    patched(patchId: string) {
      assertName('ctx.patched: patch', patchId);
      return new Operation<boolean>({ kind: 'patch', name: patchId });
    },
    deprecatePatch(patchId: string) {
      assertName('ctx.deprecatePatch: patch', patchId);
      return new Operation<void>({ kind: 'patch', name: patchId, deprecated: true });
    },
    continueAsNew(input: unknown, options: ContinueAsNewOptions = {}) {
      if (typeof options !== 'object' || options === null)
        throw new TypeError('ctx.continueAsNew: options must be an object like { version }.');
      for (const key of Object.keys(options))
        if (key !== 'version')
          throw new TypeError(`ctx.continueAsNew: unknown option '${key}'; the only option is version.`);
      const { version } = options;
      if (version !== undefined && (!Number.isSafeInteger(version) || version < 1))
        throw new TypeError(
          `ctx.continueAsNew: version must be a positive integer; got ${JSON.stringify(version)}.`,
        );
      return new Operation<never>({
        kind: 'continue-as-new',
        name: 'continue-as-new',
        input,
        ...(version === undefined ? {} : { version }),
      });
    },
    signalWorkflow(workflowId: string, name: string, payload?: unknown) {
      assertWorkflowId(workflowId, 'ctx.signalWorkflow: workflow id');
      assertName('Signal', name);
      return new Operation<void>({ kind: 'signal-workflow', name, workflowId, payload });
    },
    setAttributes(changes: Record<string, AttributeInput>) {
      return new Operation<void>({
        kind: 'set-attributes',
        name: 'set-attributes',
        changes: attributeChanges(host.workflowType, host.attributes, changes),
      });
    },
    cancelWorkflow(workflowId: string, reason?: string) {
      assertWorkflowId(workflowId, 'ctx.cancelWorkflow: workflow id');
      if (reason !== undefined && (typeof reason !== 'string' || reason.length > 1_000))
        throw new TypeError('ctx.cancelWorkflow: reason must be a string of at most 1,000 characters.');
      return new Operation<'requested' | 'already-finished'>({
        kind: 'cancel-workflow',
        name: 'cancel-workflow',
        workflowId,
        reason,
      });
    },
  };
  return ctx;
}
