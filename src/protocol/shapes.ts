/**
 * The shapes the wire contract shares across its domains: the protocol version, the studio's claim timings,
 * a worker host's status, engine presence and records, warnings, `hello`'s answer, and the fleet's
 * processes. Types and constants only.
 */
import type { EngineWarning, ResultWaiterInfo, SerializedError } from '../engine';

/** The version of this protocol. Page and worker of one build always agree; a mismatch means a stale tab. */
export const PROTOCOL_VERSION = 6;

/**
 * The claim timings of every host's engine unless told otherwise (a browser tab's, a `shuttle worker`'s),
 * defined once: a claim (an engine's session) lives 6 s without renewal, is renewed every second, and may be
 * taken over 2 s (two renew intervals) after it expired. The host configures its engine with them; the
 * studio's pages draw claims and wait on takeovers with them.
 */
export const hostClaimTimings = { ttlMs: 6_000, renewIntervalMs: 1_000, graceMs: 2_000 } as const;

// ---------------------------------------------------------------------------------------------------------
// Shared shapes

/** `'engine'`: this tab runs workflows. `'viewer'` (`?engine=off`): it only observes and never claims. */
export type EngineMode = 'engine' | 'viewer';

/**
 * The life of the worker host of one tab. `frozen`: its event loop is stalled on purpose (chaos freeze) until
 * `HostStatus.frozenUntil`; it pushes `running` again when the stall ends.
 */
export type HostState = 'starting' | 'running' | 'frozen' | 'stopping' | 'stopped' | 'failed';

export type HostStatus = {
  state: HostState;
  /** When the host entered this state (epoch ms). */
  since: number;
  /** For `frozen`: when the stall ends (epoch ms). */
  frozenUntil?: number;
  /** A sentence for people: why it failed, what to do. Present for `failed`. */
  message?: string;
  error?: SerializedError;
};

/**
 * The status an engine advertises in its presence record. `crashed` is written on a crashed engine's behalf
 * by another engine (a crashed worker writes nothing): its tab terminated it through the control channel.
 */
export type PresenceStatus = 'starting' | 'running' | 'frozen' | 'stopped' | 'crashed';

/**
 * An engine's status as `engines()` reports it: the presence status, or `dead` when the engine's Web Lock is
 * not held although it never recorded a stop (its tab was closed or crashed before it could say so).
 */
export type EngineStatus = PresenceStatus | 'dead';

/** What an engine has done since it started; published in its presence record. */
export type EngineCounters = {
  /** Workflows this engine drove to `completed`. */
  workflowsCompleted: number;
  /** Claims this engine lost (taken over, rotated, or refused at a write). */
  claimsLost: number;
  /** Writes of this engine that the epoch fence refused. */
  writesFencedOut: number;
  /** In-memory wake-ups this engine discarded because it no longer owned the workflow. */
  wakesDiscarded: number;
  /** Claims this engine took over from an expired or dead holder. */
  takeovers: number;
};

/**
 * An engine's presence record, stored under `engine:<engineId>` and refreshed every second by its worker.
 * Engines of every tab sharing the database are visible through it.
 */
export type EnginePresence = {
  engineId: string;
  /** e.g. `Tab C`. Unique per database: a new engine (a reload, a new tab) gets the next letter. */
  label: string;
  /** The letters of `label` shown inside colour chips, e.g. `C`. */
  shortLabel: string;
  /** `#rrggbb` from a palette whose colours also differ in lightness. */
  color: string;
  mode: EngineMode;
  status: PresenceStatus;
  /** For `frozen`: when the stall ends (epoch ms). */
  frozenUntil?: number;
  startedAt: number;
  lastSeenAt: number;
  claimsHeld: number;
  /** The studio protocol version of the engine's build; another version means a stale tab. */
  protocolVersion: number;
  /** The engine's result waiters: pending first, then the 20 most recently settled. */
  resultWaiters: ResultWaiterInfo[];
  counters: EngineCounters;
  /** Where the engine runs: a studio tab, or a server process (with its host name and process id). */
  runtime: EngineRuntime;
  /**
   * The engine's number in its database (0 for the first engine, `Tab A`), from which its label and colour
   * come; records of older builds have none.
   */
  ordinal?: number;
};

/** Where an engine runs. */
export type EngineRuntime = { kind: 'tab' } | { kind: 'server'; hostName: string; pid: number };

/** An engine as the `engines` request reports it. */
export type EngineRecord = Omit<EnginePresence, 'status'> & {
  status: EngineStatus;
  /** Whether the engine's Web Lock is held (it is alive), or null when the browser cannot tell. */
  alive: boolean | null;
  /** The engine of the worker that answered. */
  thisTab: boolean;
  /**
   * For a tab's engine: whether its page is still open and hosts it (the page holds the Web Lock
   * `shuttle-tab:<engineId>` while this engine is its engine, so the lock goes when the page closes, crashes
   * or restarts its engine). Only then can the engine be restarted. Null or absent when nobody can tell (a
   * server process, a browser without Web Locks).
   */
  tabOpen?: boolean | null;
};

/**
 * An engine as the engine directory remembers it (`engineDirectory`): who it was, kept after its presence
 * record is gone, so history (custody lanes, events, claims) keeps naming and colouring it. Written when the
 * engine starts; `stoppedAt` once its stop, crash or death is known (null before).
 */
export type EngineDirectoryEntry = {
  engineId: string;
  label: string;
  shortLabel: string;
  /** The colour its host recorded (`EnginePresence.color`). */
  color: string;
  /** Its number in the database (see `EnginePresence.ordinal`); null when unknown (an older build). */
  ordinal: number | null;
  mode: EngineMode;
  runtime: EngineRuntime;
  startedAt: number;
  stoppedAt: number | null;
};

/**
 * Something went wrong that the worker handled, but a person should know: the engine's own warnings (a claim
 * lost, a wake discarded, a corrupt record, a storage hiccup), presence writes failing, malformed messages
 * that carried no id to reply to, and errors nobody caught inside the worker.
 */
export type HostWarning = {
  /**
   * `VersionMismatchWarning`: another live engine of the database runs a different build of the studio
   * (`engineId` names it); the message says which tab to reload.
   */
  /** `DefinitionWarning`: a saved definition could not be loaded by this engine (the message says why). */
  name:
    | EngineWarning['name']
    | 'PresenceWarning'
    | 'ProtocolWarning'
    | 'WorkerWarning'
    | 'VersionMismatchWarning'
    | 'DefinitionWarning';
  message: string;
  workflowId?: string;
  engineId?: string;
};

/** What `hello` tells the page about its worker (or the server it is connected to). */
export type HelloResult = {
  protocolVersion: number;
  engineId: string;
  label: string;
  shortLabel: string;
  color: string;
  mode: EngineMode;
  databaseName: string;
  status: HostStatus;
  /** Where this engine runs: the tab's own worker, or a server the page is connected to. */
  runtime: EngineRuntime;
  /** The store, in words, e.g. `IndexedDB 'shuttle'` or `PostgreSQL 127.0.0.1:5432/shuttle`. */
  store: string;
  /** The claim timings of this store's engines (how long a silent engine keeps its workflows). */
  claimTimings: { ttlMs: number; renewIntervalMs: number; graceMs: number };
  /** Whether definitions written in the studio can be compiled, saved and run here (not on servers). */
  authoring: boolean;
};

/** A worker process of a fleet that the server controls (`shuttle dev`). */
export type FleetProcess = {
  /** The engine it runs, once it has started one. */
  engineId: string | null;
  label: string;
  pid: number;
  state: 'starting' | 'running' | 'frozen' | 'stopping' | 'exited';
  startedAt: number;
  /** How it ended (`SIGKILL`, exit code 0, …), once it has. */
  exit?: string;
};

/** What the studio can do to a worker process of a controlled fleet. */
export type FleetActionType = 'kill' | 'freeze' | 'thaw' | 'stop' | 'start';

/** What a fleet action did. */
export type FleetActionOutcome = {
  action: FleetActionType;
  pid: number;
  engineId: string | null;
  label: string;
};

/**
 * A tab's wish to keep its label for its lifetime in that browser tab, sent with the first `hello` of a
 * reloaded, restarted or resumed tab: the label its previous engine had and that engine's id (which has
 * ended). Granted unless another live engine has that label now (a duplicated tab); see `presence.ts`.
 */
export type KeepLabel = { label: string; previousEngineId: string };

/** The database and mode a worker serves; sent with `hello`. */
export type WorkerConfig = {
  /** IndexedDB database name. Default `shuttle`; end-to-end tests use a fresh name per test. */
  databaseName: string;
  mode: EngineMode;
};
