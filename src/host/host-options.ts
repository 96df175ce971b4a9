/**
 * The options of a worker host (`serveEngineHost`, engine-host.ts) and what a running host offers: types
 * only, so callers (the browser worker, the server) can read what a host takes without reading how it works.
 */
import type {
  AnyWorkflowDefinition,
  Engine,
  EngineEvent,
  EngineLiveness,
  EngineOptions,
  ShutdownReport,
} from '../engine';
import type { HostStatus, HostWarning, WorkerConfig } from '../protocol';
import type { Storage } from '../storage/types';
import type { BuiltInInfo } from './authoring/definition-store';
import type { CompileSandbox } from './authoring/compile-sandbox';
import type { EngineDeathWatch } from './death-watch';
import type { FleetControl, HostPort } from './handlers';
import type { EngineIdentity } from './presence';

/**
 * A liveness oracle that can also list every live engine at once, and count an engine dead before the
 * oracle itself would know (its tab announced it is going away). `WebLocksLiveness` can do both.
 */
export type HostLiveness = EngineLiveness & {
  liveEngineIds?(): Promise<ReadonlySet<string> | null>;
  markGone?(engineId: string): void;
  /**
   * Engines whose tab's page is open and hosts them (the page holds `shuttle-tab:<engineId>`), or null when
   * it cannot tell. Only such an engine can be restarted from another tab.
   */
  openTabEngineIds?(): Promise<ReadonlySet<string> | null>;
};

/** Options of `serveEngineHost`. */
export type EngineHostOptions = {
  /** The page that talks to this host (a tab's worker port); more can join with `connect`. */
  port?: HostPort;
  /**
   * Start at once with this config, without waiting for a page's `hello` (a server process). A `hello` then
   * learns what the host serves instead of choosing it. Default: the first `hello` chooses.
   */
  config?: WorkerConfig;
  /**
   * Opens the storage of a database. Called once, on the first `hello` (or at once with `config`).
   * `onUnavailable` must be called if the database becomes unusable later (deleted or upgraded in another
   * tab, closed by the browser, its server gone for good).
   */
  openStorage(databaseName: string, onUnavailable: (error: Error) => void): Promise<Storage>;
  /**
   * Who closes that storage. `host` (default): `dispose` closes it (a tab's worker opened its IndexedDB for
   * this host alone). `caller`: whoever passed `openStorage` keeps it open past `dispose` and closes it
   * itself (a server process, whose store may serve its studio and several engines at once).
   */
  storageOwner?: 'host' | 'caller';
  /** What the studio calls the store, e.g. `IndexedDB 'shuttle'` or `PostgreSQL db.internal:5432/shuttle`. */
  storeLabel?: (databaseName: string) => string;
  /** Where the host runs: a browser tab (default) or a server process, with its host name and pid. */
  runtime?: { kind: 'tab' } | { kind: 'server'; hostName: string; pid: number };
  /**
   * Takes this engine's label and colour. Default `allocateEngineIdentity` (`Tab A`, `Tab B`, …); server
   * processes pass their own (`worker-1`, …).
   */
  allocateIdentity?: (storage: Storage, engineId: string) => Promise<EngineIdentity>;
  /**
   * Whether definitions saved in the studio are loaded (compiled, evaluated, registered) by this engine.
   * Default true (a tab runs what its own user wrote). A server passes false unless its operator opted in:
   * the browser must not make a server run code; the studio then shows definitions read-only.
   */
  loadAuthoredDefinitions?: boolean;
  /** Whether the chaos `freeze` (a stall of this event loop) is served. Default true (tabs). */
  allowFreeze?: boolean;
  /** The definitions every engine registers (the built-in demos). Their names are reserved. */
  workflows: readonly AnyWorkflowDefinition[];
  /**
   * The workflow queues this engine declares (`EngineOptions.queues`); every engine of the store declares the
   * same ones. Default: none.
   */
  queues?: EngineOptions['queues'];
  /**
   * Activity concurrency limits this engine declares (`EngineOptions.activityLimits`); declare the same on
   * every engine that runs the activities. Default: none.
   */
  activityLimits?: EngineOptions['activityLimits'];
  /** What the studio shows of each built-in (source, title, child-only), by type name. Default: nothing. */
  builtInInfo?: ReadonlyMap<string, BuiltInInfo>;
  /**
   * Where authored sources are compiled before they are saved or checked (a throwaway worker in the
   * browser: see compile-sandbox.ts). Default: in this worker.
   */
  compileSandbox?: Pick<CompileSandbox, 'check' | 'dispose'>;
  /** Liveness oracle (Web Locks in the browser). Default: none (claims then expire by TTL only). */
  liveness?: HostLiveness;
  /**
   * Creates the death watch of this engine (`DeathWatch` over Web Locks in the browser), which calls
   * `onDeath` the moment another engine dies. Default: none (a dead engine's claims are then found by the
   * engine's own reclaim pass, within a renew interval when the liveness oracle knows, else after the TTL).
   */
  deathWatch?: (selfId: string, onDeath: (engineId: string) => void) => EngineDeathWatch;
  /** Claim TTL, in ms. Default 6,000. */
  workflowClaimTtlMs?: number;
  /** Claim renewal interval, in ms. Default 1,000. */
  workflowClaimRenewIntervalMs?: number;
  /**
   * How long a finished run is kept, in ms after it ended, for types whose definition sets no `retentionMs`
   * of its own (the engine's `retentionMs`). Default: kept forever.
   */
  retentionMs?: number;
  /**
   * The app's own stack mapper, applied to a recorded failure's stack after the host has mapped the frames of
   * definitions it compiled (e.g. to map a bundle's frames through its source map). See `EngineOptions.mapStack`.
   */
  mapStack?: (stack: string) => string;
  /** Spans for the engine's work (`EngineOptions.tracer`; e.g. `openTelemetryTracer()`). Default: none. */
  tracer?: EngineOptions['tracer'];
  /** Middleware around activities and workflows (`EngineOptions.interceptors`). Default: none. */
  interceptors?: EngineOptions['interceptors'];
  /** The payload codec (`EngineOptions.codec`): an encoded store needs it. Default: none. */
  codec?: EngineOptions['codec'];
  /** How often the presence record is refreshed and a heartbeat pushed, in ms. Default 1,000. */
  heartbeatIntervalMs?: number;
  /** Shortest interval between two pushes of events or store changes, in ms. Default 16. */
  pushIntervalMs?: number;
  /** Current time in epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Mints this engine's id. Default `crypto.randomUUID`. */
  randomUUID?: () => string;
  /** The fleet this host's server controls, if any: its pages may kill, freeze, thaw, stop and start workers. */
  fleet?: FleetControl;
  /** Receives the host's warnings besides the pages (a server logs them). */
  onWarning?: (warning: HostWarning) => void;
  /** Receives every engine event besides the pages (a server logs claims, takeovers, fenced writes). */
  onEvent?: (event: EngineEvent) => void;
};

/** A running host. */
export type EngineHost = {
  readonly engineId: string;
  /** A page (a tab's worker port, a WebSocket) joins: it may send requests and receives every push. */
  connect(port: HostPort): () => void;
  /** The engine, once it runs (a server process drives it without a page). */
  engine(): Promise<Engine>;
  /** Shuts the engine down gracefully (every claim let go), as the `shutdown` request does. */
  shutdown(): Promise<ShutdownReport>;
  /** The host's state now (starting, running, frozen, stopping, stopped, failed). */
  status(): HostStatus;
  /** This engine's label and colour (a placeholder until the store is open). */
  identity(): EngineIdentity;
  /** Reports an error nobody caught inside the worker to the page, as a warning. */
  reportUncaught(error: unknown): void;
  /**
   * Shuts the engine down (if it started), stops every timer, stops listening, and closes the storage unless
   * its caller owns it (`storageOwner: 'caller'`).
   */
  dispose(): Promise<void>;
};
