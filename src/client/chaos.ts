/**
 * `client.chaos`: chaos actions on any engine of the database, for drills and demos — and how each is
 * carried out: on this tab's engine directly (`performOnThisTab`), on another tab's through the control
 * channel (control-channel.ts: the hosting tab performs it and replies), or, on a page served by a studio
 * server, on a worker process of the fleet it controls (`fleetAction` requests).
 */
import type { StartOptions } from '../engine';
import type { ControlAction, ControlOutcome, ControlOutcomes, HelloResult } from '../protocol';
import type { ProtocolApi } from './api';
import type { ControlChannel } from './control-channel';
import { namedError } from './errors';

/**
 * Chaos actions on any engine of the database, for drills and demos. Each resolves once the tab hosting the
 * engine has done it, and rejects with `ControlTargetNotFoundError` when no open tab hosts that engine (no
 * answer within 2 s).
 */
export type ChaosControls = {
  /**
   * Stalls the engine's worker for `seconds` (0 < seconds ≤ 600), like a frozen tab: no renewals, no turns.
   * It keeps its Web Lock, so other tabs take its workflows over only after the claim TTL (6 s + 2 s grace);
   * when it wakes up, its next write is refused by the epoch fence. Resolves when the stall begins.
   *
   * @example
   * await shuttle.chaos.freeze(engineId, 10);
   */
  freeze(engineId: string, seconds: number): Promise<ControlOutcomes['freeze']>;
  /**
   * Terminates the engine's worker at once (`worker.terminate()`), like a crashed tab. Its Web Lock goes
   * with it, so other tabs take its workflows over within moments. Its tab stays open without an engine,
   * until `restart`.
   */
  crash(engineId: string): Promise<ControlOutcomes['crash']>;
  /** Shuts the engine down gracefully: every claim is released and other tabs take over at once. */
  shutdown(engineId: string): Promise<ControlOutcomes['shutdown']>;
  /**
   * Terminates the engine's worker (if it still runs) and starts a new one in the same tab, with a new
   * engine id. Works on a crashed engine too, as long as its tab is open. Resolves with the new id.
   */
  restart(engineId: string): Promise<ControlOutcomes['restart']>;
  /**
   * Has the engine start a workflow, so that engine claims and runs it — from its own tab, like that tab's
   * `start` (the engine validates it). With `notBefore` (epoch ms) the hosting tab waits until then (at most
   * 5 s), so several engines can race to start one id at the same instant. Rejects with the error that
   * engine's start raised (name, message and fields such as `workflowId` kept). Tabs only: a studio server
   * cannot choose the worker process that runs a workflow.
   *
   * @example
   * const { workflowId } = await shuttle.chaos.start(engineId, 'countdown', { input: { from: 3, tickMs: 200 } });
   */
  start(
    engineId: string,
    workflowType: string,
    options?: { input?: unknown; options?: StartOptions; notBefore?: number },
  ): Promise<ControlOutcomes['start']>;
};

/** What chaos needs of the client: this tab's engine, and the ways to end or replace it. */
export type ChaosHost = {
  readonly api: ProtocolApi;
  /** The page talks to a studio server: chaos acts on the worker processes of its fleet. */
  readonly server: boolean;
  /** The database's control channel, or null (then only this tab's engine can be reached). */
  control(): ControlChannel | null;
  /** The engine this tab runs now, or null. */
  engineId(): string | null;
  /** The engine whose worker this tab terminated while it runs none (it can still be restarted), or null. */
  formerEngineId(): string | null;
  /** Until when this tab's engine is frozen (epoch ms; 0: it is not), and its label, for messages. */
  frozenUntil(): number;
  label(): string | null;
  /** Terminates this tab's worker at once, saying `message` to this page. */
  terminate(message: string): void;
  /** This tab's engine `engineId` was terminated at `at`: tell the other tabs, for their records. */
  noteCrash(engineId: string, at: number): void;
  restartThisTab(): Promise<HelloResult>;
  start(workflowType: string, input?: unknown, options?: StartOptions): Promise<string>;
};

/** The longest a control `start` waits for its `notBefore`, in ms. */
const maxStartDelayMs = 5_000;

/** `client.chaos`: validates each call's arguments, then sends the action where its engine runs. */
export function createChaosControls(host: ChaosHost): ChaosControls {
  return {
    freeze: (engineId, seconds) => {
      if (typeof seconds !== 'number' || !(seconds > 0 && seconds <= 600))
        return Promise.reject(
          namedError(
            'InvalidArgumentError',
            `chaos.freeze: seconds must be a number above 0 and at most 600, not ${String(seconds)}.`,
          ),
        );
      return controlRequest(host, engineId, { type: 'freeze', seconds });
    },
    crash: (engineId) => controlRequest(host, engineId, { type: 'crash' }),
    shutdown: (engineId) => controlRequest(host, engineId, { type: 'shutdown' }),
    restart: (engineId) => controlRequest(host, engineId, { type: 'restart' }),
    start: (engineId, workflowType, { input, options, notBefore } = {}) => {
      if (typeof workflowType !== 'string' || workflowType.length === 0)
        return Promise.reject(
          namedError('InvalidArgumentError', 'chaos.start: workflowType must be a definition name.'),
        );
      if (notBefore !== undefined && (typeof notBefore !== 'number' || !Number.isFinite(notBefore)))
        return Promise.reject(
          namedError('InvalidArgumentError', 'chaos.start: notBefore must be a time (epoch ms).'),
        );
      return controlRequest(host, engineId, {
        type: 'start',
        workflowType,
        ...(input === undefined ? {} : { input }),
        ...(options === undefined ? {} : { options }),
        ...(notBefore === undefined ? {} : { notBefore }),
      });
    },
  };
}

/** Sends an action to the engine `engineId`: the server's fleet, another tab through the channel, or here. */
function controlRequest<A extends ControlAction>(
  host: ChaosHost,
  engineId: string,
  action: A,
): Promise<ControlOutcomes[A['type']]> {
  if (typeof engineId !== 'string' || engineId.length === 0)
    return Promise.reject(
      namedError('InvalidArgumentError', `chaos.${action.type}: engineId must be an engine id string.`),
    );
  if (host.server) return fleetChaos(host.api, engineId, action) as Promise<ControlOutcomes[A['type']]>;
  const control = host.control();
  if (control) return control.request(engineId, action);
  if (engineId === host.engineId() || (action.type === 'restart' && engineId === host.formerEngineId()))
    return performOnThisTab(host, action, engineId) as Promise<ControlOutcomes[A['type']]>;
  return Promise.reject(
    namedError(
      'ControlTargetNotFoundError',
      `Engine ${engineId} is not this tab's, and this client has no control channel to reach other tabs.`,
      { engineId, action: action.type },
    ),
  );
}

/** Chaos on a worker process of the fleet the studio server controls (the server refuses if none). */
async function fleetChaos(
  api: ProtocolApi,
  engineId: string,
  action: ControlAction,
): Promise<ControlOutcome> {
  switch (action.type) {
    case 'freeze':
      await api.fleetAction({ engineId, action: 'freeze', seconds: action.seconds });
      return { engineId, frozenUntil: Date.now() + action.seconds * 1000 };
    case 'crash':
      await api.fleetAction({ engineId, action: 'kill' });
      return { engineId, crashedAt: Date.now() };
    case 'shutdown':
      await api.fleetAction({ engineId, action: 'stop' });
      return { engineId, claimsReleased: 0 };
    case 'restart': {
      await api.fleetAction({ engineId, action: 'stop' });
      const started = await api.fleetAction({ action: 'start' });
      return { engineId, newEngineId: started.engineId ?? '' };
    }
    case 'start':
      throw namedError(
        'UnsupportedError',
        'chaos.start: a studio server cannot choose which worker process starts a workflow; use start().',
        { engineId, action: action.type },
      );
  }
}

/**
 * Performs a chaos action on this tab's engine `engineId`: asked by this tab, or through the control channel
 * by another. A crashed engine (this tab's former one) can only be restarted.
 */
export async function performOnThisTab(
  host: ChaosHost,
  action: ControlAction,
  engineId: string,
): Promise<ControlOutcome> {
  const hosted = host.engineId() === engineId;
  const former = host.formerEngineId() === engineId;
  if (!hosted && !(former && action.type === 'restart'))
    throw namedError(
      'ControlTargetNotFoundError',
      `This tab does not run engine ${engineId}${former ? ' any more (it crashed; it can only be restarted)' : ''}.`,
      { engineId, action: action.type },
    );
  switch (action.type) {
    case 'freeze': {
      if (host.frozenUntil() > Date.now())
        throw namedError(
          'InvalidWorkflowStateError',
          `${host.label() ?? 'This engine'} is already frozen until ${new Date(host.frozenUntil()).toISOString()}.`,
        );
      const { frozenUntil } = await host.api.freeze({ seconds: action.seconds });
      return { engineId, frozenUntil };
    }
    case 'crash': {
      const crashedAt = Date.now();
      host.terminate(
        'This tab’s engine worker was crashed on purpose (chaos). Its workflows moved to other tabs; restart the engine or reload the tab.',
      );
      host.noteCrash(engineId, crashedAt);
      return { engineId, crashedAt };
    }
    case 'shutdown': {
      const report = await host.api.shutdown({});
      return { engineId, claimsReleased: report.claimsReleased };
    }
    case 'restart': {
      const hello = await host.restartThisTab();
      return { engineId, newEngineId: hello.engineId };
    }
    case 'start': {
      const delay = Math.min((action.notBefore ?? 0) - Date.now(), maxStartDelayMs);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      if (host.engineId() !== engineId)
        throw namedError(
          'ControlTargetNotFoundError',
          `This tab does not run engine ${engineId} any more (it was replaced while the start waited).`,
          { engineId, action: action.type },
        );
      const workflowId = await host.start(action.workflowType, action.input, action.options);
      return { engineId, workflowId };
    }
  }
}
