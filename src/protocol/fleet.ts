/**
 * The fleet and chaos domain of the wire contract: a page's first `hello`, the engines of a store, and what
 * a page may do to an engine or a worker process — shut it down, freeze it, record its crash or its exit,
 * and act on the processes of a fleet a server controls (`shuttle dev`).
 */
import type { ShutdownReport } from '../engine';
import { method, type Empty } from './declare';
import type {
  EngineDirectoryEntry,
  EngineRecord,
  FleetActionOutcome,
  FleetProcess,
  HelloResult,
  KeepLabel,
  WorkerConfig,
} from './shapes';

export const fleetMethods = {
  /**
   * The first request of a page. Its config chooses the database and mode; the worker starts its engine on
   * the first hello and answers at once (the engine may still be starting: see `status`). Later hellos
   * return fresh information and must name the same config.
   */
  hello: method<{ protocolVersion: number; keepLabel?: KeepLabel } & WorkerConfig, HelloResult>({
    protocolVersion: 'integer',
    databaseName: 'string',
    mode: 'mode',
    keepLabel: 'object?',
  }),
  engines: method<Empty, EngineRecord[]>({}),
  /**
   * Every engine the database has run, as the engine directory remembers it (kept after presence records
   * age out), oldest first, so the studio names and colours an engine of the past as it did when it ran.
   */
  engineDirectory: method<Empty, EngineDirectoryEntry[]>({}),
  /** Graceful shutdown: releases every claim (other tabs take over at once) and marks presence stopped. */
  shutdown: method<Empty, ShutdownReport>({}),
  /**
   * Chaos: stalls the worker's event loop for `seconds` (0 < seconds ≤ 600), like a frozen tab. The worker
   * first marks its presence `frozen` and pushes the status, then answers, then busy-waits. It keeps its Web
   * Lock, so other engines take its workflows over only after the claim TTL.
   */
  freeze: method<{ seconds: number }, { frozenUntil: number }>({ seconds: 'number' }),
  /** Records in another engine's presence that its tab terminated its worker (status `crashed`). */
  recordCrash: method<{ engineId: string; at: number }, null>({ engineId: 'string', at: 'number' }),
  /**
   * Another tab announced that its engine is going away (its page is being hidden for good): count it dead
   * now and take its workflows over.
   */
  engineExiting: method<{ engineId: string }, null>({ engineId: 'string' }),
  /** The worker processes of the fleet this server controls (`controlled: false` when it controls none). */
  fleet: method<Empty, { controlled: boolean; processes: FleetProcess[] }>({}),
  /**
   * Acts on a worker process of the controlled fleet: `kill` (SIGKILL), `freeze` for `seconds` (SIGSTOP, then
   * SIGCONT), `thaw` (SIGCONT), `stop` (SIGTERM: graceful), or `start` one more worker (no `engineId`).
   */
  fleetAction: method<{ engineId?: string; action: string; seconds?: number }, FleetActionOutcome>({
    engineId: 'string?',
    action: 'string',
    seconds: 'number?',
  }),
} as const;
