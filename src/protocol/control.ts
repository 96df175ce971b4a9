/**
 * Tab ↔ tab: the control channel (a `BroadcastChannel` named `shuttle-control:<database>`) carries
 * `ControlMessage`s between the main threads of the tabs of one database, so any tab can freeze, crash, shut
 * down or restart another tab's engine, or have it start a workflow. `parseControlMessage` validates them as
 * `parseRequest` validates requests; a message of another protocol version is reported as such, so the
 * receiver can ignore it with a warning.
 */
import type { SerializedError, StartOptions } from '../engine';
import { describeValue, isPlainObject } from './fields';
import { PROTOCOL_VERSION } from './shapes';

/** The name of the control channel of a database: one `BroadcastChannel` shared by all its tabs. */
export function controlChannelName(databaseName: string): string {
  return `shuttle-control:${databaseName}`;
}

/** Prefix of the Web Lock a page holds for its engine: `shuttle-tab:<engineId>`. */
export const tabLockPrefix = 'shuttle-tab:';

/**
 * The Web Lock a tab's page holds while `engineId` is its engine (from its first `hello` until the page
 * closes or replaces the engine): held means the page is open and could restart that engine.
 */
export function tabLockName(engineId: string): string {
  return tabLockPrefix + engineId;
}

/**
 * What one tab can ask the tab hosting an engine to do to that engine. `start` has that engine start a
 * workflow (so it claims and runs it), no earlier than `notBefore` (epoch ms) when given, so several tabs can
 * start at one instant; the hosting tab waits at most 5 s for it.
 */
export type ControlAction =
  | { type: 'freeze'; seconds: number }
  | { type: 'crash' }
  | { type: 'shutdown' }
  | { type: 'restart' }
  | { type: 'start'; workflowType: string; input?: unknown; options?: StartOptions; notBefore?: number };

export type ControlActionType = ControlAction['type'];

/** What each action reports when it is done. `engineId` is the engine acted on. */
export type ControlOutcomes = {
  /** The worker marked itself frozen and is stalled until `frozenUntil` (epoch ms). */
  freeze: { engineId: string; frozenUntil: number };
  /** The worker was terminated at `crashedAt`; its Web Lock is gone, so other tabs take over at once. */
  crash: { engineId: string; crashedAt: number };
  /** The engine shut down gracefully, releasing `claimsReleased` claims. */
  shutdown: { engineId: string; claimsReleased: number };
  /** The old worker was terminated and the tab now runs `newEngineId`. */
  restart: { engineId: string; newEngineId: string };
  /** The engine started workflow `workflowId`. */
  start: { engineId: string; workflowId: string };
};

export type ControlOutcome = ControlOutcomes[ControlActionType];

export type ControlMessage =
  /** Asks the tab hosting `engineId` to act on it. `from` is the asking tab's engine id, when it has one. */
  | {
      kind: 'control-request';
      v: number;
      requestId: string;
      engineId: string;
      action: ControlAction;
      from: string | null;
    }
  /** The hosting tab has the request and is acting on it (sent before acting). */
  | { kind: 'control-ack'; v: number; requestId: string; engineId: string }
  /** The outcome of a request. */
  | { kind: 'control-reply'; v: number; requestId: string; ok: true; value: ControlOutcome }
  | { kind: 'control-reply'; v: number; requestId: string; ok: false; error: SerializedError }
  /** A tab terminated its engine's worker at `at`; tabs that hear it record the engine as crashed. */
  | { kind: 'engine-crashed'; v: number; engineId: string; at: number }
  /**
   * A tab is going away (`pagehide`: closed, reloaded, navigated): its engine is about to die. Tabs that hear
   * it count the engine dead at once and take its workflows over, without waiting for the browser to release
   * its Web Lock (which takes a tenth of a second or more after the page is gone).
   */
  | { kind: 'engine-exiting'; v: number; engineId: string; at: number };

/** The result of `parseControlMessage`. */
export type ParsedControlMessage =
  | { ok: true; message: ControlMessage }
  /** A control message of another build: ignore it, with a warning (`version` as received). */
  | { ok: false; reason: 'version'; version: unknown; kind: string }
  | { ok: false; reason: 'malformed'; problem: string };

const controlActionTypes: ReadonlySet<string> = new Set(['freeze', 'crash', 'shutdown', 'restart', 'start']);

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 200;
}

function checkControlAction(value: unknown): string | null {
  if (!isPlainObject(value) || !controlActionTypes.has(value.type as string))
    return `action must be one of ${[...controlActionTypes].join(', ')}, not ${describeValue(value)}`;
  if (value.type === 'freeze') {
    const seconds = value.seconds;
    if (typeof seconds !== 'number' || !(seconds > 0 && seconds <= 600))
      return `freeze seconds must be a number above 0 and at most 600, not ${describeValue(seconds)}`;
  }
  if (value.type === 'start') {
    // Plain data for the hosting tab's `start`, which the engine validates again.
    if (!isNonEmptyString(value.workflowType))
      return `start workflowType must be a string, not ${describeValue(value.workflowType)}`;
    if (value.options !== undefined && !isPlainObject(value.options))
      return `start options must be a plain object, not ${describeValue(value.options)}`;
    const notBefore = value.notBefore;
    if (notBefore !== undefined && (typeof notBefore !== 'number' || !Number.isFinite(notBefore)))
      return `start notBefore must be a time (epoch ms), not ${describeValue(notBefore)}`;
  }
  return null;
}

/**
 * Validates a message from the control channel (never throws). Other tabs run code of their own build, so
 * nothing is trusted: envelope, version, ids and action are all checked.
 */
export function parseControlMessage(data: unknown): ParsedControlMessage {
  if (!isPlainObject(data) || typeof data.kind !== 'string')
    return { ok: false, reason: 'malformed', problem: `not a control message: ${describeValue(data)}` };
  const kinds = ['control-request', 'control-ack', 'control-reply', 'engine-crashed', 'engine-exiting'];
  if (!kinds.includes(data.kind))
    return { ok: false, reason: 'malformed', problem: `unknown kind ${describeValue(data.kind)}` };
  if (data.v !== PROTOCOL_VERSION) return { ok: false, reason: 'version', version: data.v, kind: data.kind };
  const malformed = (problem: string): ParsedControlMessage => ({
    ok: false,
    reason: 'malformed',
    problem: `${data.kind as string}: ${problem}`,
  });
  switch (data.kind) {
    case 'control-request': {
      if (!isNonEmptyString(data.requestId)) return malformed('requestId must be a string');
      if (!isNonEmptyString(data.engineId)) return malformed('engineId must be a string');
      if (data.from !== null && !isNonEmptyString(data.from))
        return malformed('from must be a string or null');
      const problem = checkControlAction(data.action);
      if (problem) return malformed(problem);
      break;
    }
    case 'control-ack':
      if (!isNonEmptyString(data.requestId) || !isNonEmptyString(data.engineId))
        return malformed('requestId and engineId must be strings');
      break;
    case 'control-reply':
      if (!isNonEmptyString(data.requestId)) return malformed('requestId must be a string');
      if (data.ok === true ? !isPlainObject(data.value) : data.ok !== false || !isPlainObject(data.error))
        return malformed('a reply needs ok with a value, or ok: false with an error');
      break;
    case 'engine-crashed':
    case 'engine-exiting':
      if (!isNonEmptyString(data.engineId) || typeof data.at !== 'number' || !Number.isFinite(data.at))
        return malformed('engineId must be a string and at a time');
      break;
  }
  return { ok: true, message: data as ControlMessage };
}
