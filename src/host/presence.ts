/**
 * Engine presence: how the engines of every tab sharing a database see each other. Each worker stores a
 * record under `engine:<engineId>` (label, colour, mode, status, start time, last heartbeat, claims held)
 * and refreshes it every second, directly through the storage (presence is not workflow state and is never
 * fenced).
 *
 * Guarantees:
 * - Labels are unique among the live engines of a database: `allocateEngineIdentity` takes the next number
 *   from a compare-and-swap counter (`studio:engine-counter`), so two tabs starting at the same instant never
 *   get one label. A browser tab keeps its label for its lifetime: a reloaded, restarted or resumed tab asks
 *   for its previous engine's label (`KeepLabel`, remembered in the tab's `sessionStorage`) and gets it back
 *   unless another engine with that label is alive (a duplicated tab copies `sessionStorage`: it gets the
 *   next letter). The new engine is still a new engine (a new id, its old epochs fenced); custody lanes of
 *   two engines of one tab both say `Tab A`, told apart by their engine ids. Labels that were never handed
 *   out by the counter are not granted.
 * - Colours come from the Okabe–Ito palette, ordered so that consecutive engines differ in lightness as well
 *   as hue, and every chip also shows the label's letters: nobody has to tell engines apart by hue alone.
 * - A presence record that does not decode is skipped, never fatal: `readPresence` returns what it can.
 *   Records of other builds decode as far as they can (missing newer fields get empty defaults), so a stale
 *   tab is still listed — with its protocol version, which is how the studio tells people to reload it.
 * - `engineStatusOf` is the one place that turns a record and the Web Locks answer into a status: an engine
 *   whose lock is not held although it never recorded a stop is `dead`.
 * - Records of engines dead for longer than `presenceRetentionMs` (10 minutes) are not listed and are
 *   deleted (`prunePresence`), each with a compare-and-swap on the exact value read, so a record that was
 *   refreshed meanwhile is never deleted. A record whose engine holds its lock is never pruned.
 * - `recordCrash` marks another engine's record `crashed` with a compare-and-swap too; a record that
 *   already says `stopped` or `crashed` is left alone.
 * - Every engine also has an entry in the engine directory (engine-directory.ts), written with its first
 *   presence record and never deleted, so who an engine was outlives its presence: `PresenceWriter` writes it
 *   with the first record and again, with its stop time, with a `stopped` or `crashed` one; `recordCrash`
 *   and `prunePresence` fill in the stop time of an engine that could not (pruning in the same
 *   compare-and-swap batch as the delete, so a pruned engine is never left without an entry).
 */
import { hostKeys, type ResultWaiterInfo } from '../engine';
import type { Storage } from '../storage';
import {
  PROTOCOL_VERSION,
  type KeepLabel,
  type EngineCounters,
  type EngineMode,
  type EnginePresence,
  type EngineRuntime,
  type EngineStatus,
  type PresenceStatus,
} from '../protocol';
import {
  directoryEntryOf,
  directoryKey,
  directoryPut,
  recordStopInDirectory,
  stopInDirectory,
} from './engine-directory';

/** Prefix of presence records. */
export const presencePrefix: string = hostKeys.enginesPrefix;

/** The key of an engine's presence record. */
export function presenceKey(engineId: string): string {
  return hostKeys.engine(engineId);
}

/** How long the records of dead engines are kept and listed, in ms: 10 minutes. */
export const presenceRetentionMs = 10 * 60_000;

/** Without Web Locks, an engine whose record was not refreshed for this long counts as dead, in ms. */
export const presenceStaleAfterMs = 5_000;

/** How many settled result waiters a presence record carries (pending ones are all carried). */
export const settledWaitersInPresence = 20;

/** Compare-and-swap counter from which engine labels are taken. */
export const engineCounterKey = 'studio:engine-counter';

/**
 * Engine colours: the Okabe–Ito palette for colour-vision deficiencies, ordered to alternate dark and light
 * (relative luminance in brackets) so that neighbours in allocation order differ in lightness too.
 */
export const enginePalette: readonly string[] = [
  '#0072B2', // blue (0.15)
  '#E69F00', // orange (0.42)
  '#009E73', // bluish green (0.26)
  '#F0E442', // yellow (0.74)
  '#D55E00', // vermillion (0.22)
  '#56B4E9', // sky blue (0.41)
  '#3D3D3D', // charcoal (0.05)
  '#CC79A7', // reddish purple (0.29)
];

/** `0 → A`, `25 → Z`, `26 → AA`, … (spreadsheet column letters). */
export function lettersFor(ordinal: number): string {
  let rest = Math.max(0, Math.floor(ordinal));
  let letters = '';
  do {
    letters = String.fromCharCode(65 + (rest % 26)) + letters;
    rest = Math.floor(rest / 26) - 1;
  } while (rest >= 0);
  return letters;
}

export type EngineIdentity = { ordinal: number; label: string; shortLabel: string; color: string };

export function identityFor(ordinal: number): EngineIdentity {
  const shortLabel = lettersFor(ordinal);
  return {
    ordinal,
    label: `Tab ${shortLabel}`,
    shortLabel,
    color: enginePalette[ordinal % enginePalette.length]!,
  };
}

/** `worker-3` → `W3`, `studio server` → `SS`, `eu-west` → `EW`: two or three letters for a chip. */
export function shortLabelOf(label: string, fallbackNumber: number): string {
  const numbered = /^([A-Za-z])[A-Za-z]*[-_ ]?(\d+)$/.exec(label);
  if (numbered) return `${numbered[1]!.toUpperCase()}${numbered[2]}`;
  const initials = label
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase())
    .join('')
    .slice(0, 3);
  return initials || `W${fallbackNumber}`;
}

/**
 * The identity of a server process: `label` when its operator named it, else `worker-<n>`; chips show `W<n>`.
 * Numbers come from the same counter as tabs', so labels never repeat within a database.
 */
export async function allocateProcessIdentity(
  storage: Storage,
  engineId: string,
  label: string | undefined,
): Promise<EngineIdentity> {
  const tab = await allocateEngineIdentity(storage, engineId);
  const number = tab.ordinal + 1;
  return {
    ordinal: tab.ordinal,
    label: label ?? `worker-${number}`,
    shortLabel: label ? shortLabelOf(label, number) : `W${number}`,
    color: tab.color,
  };
}

/**
 * Takes the next engine label of the database. Retries a lost compare-and-swap race; a corrupt counter is
 * overwritten (it only names engines). Falls back to a label derived from the engine id if the store keeps
 * refusing, so a label never blocks an engine from starting.
 */
export async function allocateEngineIdentity(
  storage: Storage,
  engineId: string,
  keep?: KeepLabel & { isAlive: (engineId: string) => Promise<boolean | null> },
): Promise<EngineIdentity> {
  if (keep) {
    const kept = await keptIdentity(storage, engineId, keep).catch(() => null);
    if (kept) return kept;
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    const raw = await storage.get(engineCounterKey);
    const current = raw === null ? 0 : Number(raw);
    const next = Number.isSafeInteger(current) && current >= 0 ? current + 1 : 1;
    const won = await storage.conditionalBatch(
      [{ key: engineCounterKey, expected: raw }],
      [{ type: 'put', key: engineCounterKey, value: String(next) }],
    );
    if (won) return identityFor(next - 1);
  }
  const hash = [...engineId].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) >>> 0, 7);
  const fallback = identityFor(hash % 26);
  return {
    ...fallback,
    label: `Tab ${engineId.slice(0, 4)}`,
    shortLabel: engineId.slice(0, 2).toUpperCase(),
  };
}

/** `A → 0`, `Z → 25`, `AA → 26`: the inverse of `lettersFor`. */
export function ordinalOfLetters(letters: string): number {
  let value = 0;
  for (const char of letters) value = value * 26 + (char.charCodeAt(0) - 64);
  return value - 1;
}

/**
 * The identity a tab asks to keep (`Tab C`), unless it is malformed, was never handed out, or another
 * engine of that label is alive (not stopped, crashed or dead).
 */
async function keptIdentity(
  storage: Storage,
  engineId: string,
  keep: KeepLabel & { isAlive: (engineId: string) => Promise<boolean | null> },
): Promise<EngineIdentity | null> {
  const letters = /^Tab ([A-Z]{1,3})$/.exec(keep.label)?.[1];
  if (!letters) return null;
  const ordinal = ordinalOfLetters(letters);
  const counter = Number(await storage.get(engineCounterKey));
  if (!(ordinal < counter)) return null;
  const now = Date.now();
  for (const presence of await readPresence(storage)) {
    if (presence.label !== keep.label) continue;
    if (presence.engineId === keep.previousEngineId || presence.engineId === engineId) continue;
    const status = engineStatusOf(presence, await keep.isAlive(presence.engineId), now);
    if (status !== 'stopped' && status !== 'crashed' && status !== 'dead') return null;
  }
  return identityFor(ordinal);
}

export function encodePresence(presence: EnginePresence): string {
  return JSON.stringify(presence);
}

const statuses: readonly PresenceStatus[] = ['starting', 'running', 'frozen', 'stopped', 'crashed'];

export const emptyCounters: EngineCounters = {
  workflowsCompleted: 0,
  claimsLost: 0,
  writesFencedOut: 0,
  wakesDiscarded: 0,
  takeovers: 0,
};

function decodeCounters(value: unknown): EngineCounters {
  const counters = { ...emptyCounters };
  if (typeof value !== 'object' || value === null) return counters;
  for (const name of Object.keys(counters) as (keyof EngineCounters)[]) {
    const count = (value as Record<string, unknown>)[name];
    if (typeof count === 'number' && Number.isFinite(count)) counters[name] = count;
  }
  return counters;
}

function isWaiter(value: unknown): value is ResultWaiterInfo {
  if (typeof value !== 'object' || value === null) return false;
  const waiter = value as Record<string, unknown>;
  return (
    typeof waiter.waiterId === 'number' &&
    typeof waiter.workflowId === 'string' &&
    typeof waiter.since === 'number' &&
    (waiter.settled === null || (typeof waiter.settled === 'object' && waiter.settled !== undefined))
  );
}

/** Where the engine runs; records of older builds (tabs only) have none. */
function decodeRuntime(value: unknown): EngineRuntime {
  if (typeof value !== 'object' || value === null) return { kind: 'tab' };
  const runtime = value as Record<string, unknown>;
  if (runtime.kind === 'server' && typeof runtime.hostName === 'string' && typeof runtime.pid === 'number')
    return { kind: 'server', hostName: runtime.hostName, pid: runtime.pid };
  return { kind: 'tab' };
}

/** Decodes a presence record, or returns null when it is not one. */
export function decodePresence(raw: string): EnginePresence | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const strings = ['engineId', 'label', 'shortLabel', 'color'] as const;
  const numbers = ['startedAt', 'lastSeenAt', 'claimsHeld', 'protocolVersion'] as const;
  if (!strings.every((name) => typeof record[name] === 'string' && record[name] !== '')) return null;
  if (!numbers.every((name) => typeof record[name] === 'number' && Number.isFinite(record[name])))
    return null;
  if (record.mode !== 'engine' && record.mode !== 'viewer') return null;
  if (!statuses.includes(record.status as PresenceStatus)) return null;
  const presence: EnginePresence = {
    engineId: record.engineId as string,
    label: record.label as string,
    shortLabel: record.shortLabel as string,
    color: record.color as string,
    mode: record.mode,
    status: record.status as PresenceStatus,
    startedAt: record.startedAt as number,
    lastSeenAt: record.lastSeenAt as number,
    claimsHeld: record.claimsHeld as number,
    protocolVersion: record.protocolVersion as number,
    resultWaiters: Array.isArray(record.resultWaiters) ? record.resultWaiters.filter(isWaiter) : [],
    counters: decodeCounters(record.counters),
    runtime: decodeRuntime(record.runtime),
  };
  if (typeof record.frozenUntil === 'number' && Number.isFinite(record.frozenUntil))
    presence.frozenUntil = record.frozenUntil;
  if (typeof record.ordinal === 'number' && Number.isSafeInteger(record.ordinal) && record.ordinal >= 0)
    presence.ordinal = record.ordinal;
  return presence;
}

/** A decoded record with the exact stored string it came from (for compare-and-swap). */
export type StoredPresence = { presence: EnginePresence; raw: string };

/** Every decodable presence record of the database, with its stored string, oldest engine first. */
export async function readStoredPresence(storage: Storage): Promise<StoredPresence[]> {
  const entries = await storage.scan(presencePrefix);
  return entries
    .map(({ value }) => ({ presence: decodePresence(value), raw: value }))
    .filter((entry): entry is StoredPresence => entry.presence !== null)
    .sort((a, b) => a.presence.startedAt - b.presence.startedAt);
}

/** Every decodable presence record of the database, oldest engine first. */
export async function readPresence(storage: Storage): Promise<EnginePresence[]> {
  return (await readStoredPresence(storage)).map(({ presence }) => presence);
}

/**
 * An engine's status from its record and whether its Web Lock is held (`alive`; null when the browser cannot
 * tell, in which case a record not refreshed for `presenceStaleAfterMs` counts as dead).
 */
export function engineStatusOf(presence: EnginePresence, alive: boolean | null, now: number): EngineStatus {
  if (presence.status === 'stopped' || presence.status === 'crashed') return presence.status;
  const gone = alive === null ? now - presence.lastSeenAt > presenceStaleAfterMs : !alive;
  return gone ? 'dead' : presence.status;
}

/**
 * Whether a record is past retention: its engine is not alive and the record was last refreshed more than
 * `presenceRetentionMs` ago.
 */
export function isPresenceExpired(presence: EnginePresence, alive: boolean | null, now: number): boolean {
  return alive !== true && now - presence.lastSeenAt > presenceRetentionMs;
}

/**
 * Deletes the records past retention among `entries` (each only if it still holds the exact value read),
 * in the same batch filling in the engine's directory entry: its stop time (the record's last heartbeat)
 * when the entry has none, or the whole entry when the engine (of an older build) never wrote one.
 * Returns how many were deleted; storage errors are left for the next call.
 */
export async function prunePresence(
  storage: Storage,
  entries: readonly (StoredPresence & { alive: boolean | null })[],
  now: number,
): Promise<number> {
  let pruned = 0;
  for (const { presence, raw, alive } of entries) {
    if (!isPresenceExpired(presence, alive, now)) continue;
    const key = presenceKey(presence.engineId);
    try {
      const directory = stopInDirectory(
        await storage.get(directoryKey(presence.engineId)),
        presence.lastSeenAt,
        presence,
        presence.engineId,
      );
      const conditions = [{ key, expected: raw }, ...(directory ? [directory.condition] : [])];
      const operations = [{ type: 'delete' as const, key }, ...(directory ? [directory.operation] : [])];
      if (await storage.conditionalBatch(conditions, operations)) pruned++;
    } catch {
      // pruning is housekeeping: try again next time
    }
  }
  return pruned;
}

/**
 * Marks `engineId`'s record `crashed` (its tab terminated its worker, which can write nothing itself).
 * Returns whether this call changed the record.
 */
export async function recordCrash(storage: Storage, engineId: string, at: number): Promise<boolean> {
  const key = presenceKey(engineId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const raw = await storage.get(key);
    const presence = raw === null ? null : decodePresence(raw);
    if (!presence || presence.status === 'stopped' || presence.status === 'crashed') return false;
    // The crashed engine was last seen when it was terminated, not at its last heartbeat.
    const crashed: EnginePresence = {
      ...presence,
      status: 'crashed',
      lastSeenAt: Math.max(presence.lastSeenAt, at),
    };
    delete crashed.frozenUntil;
    if (
      await storage.conditionalBatch(
        [{ key, expected: raw }],
        [{ type: 'put', key, value: encodePresence(crashed) }],
      )
    ) {
      await recordStopInDirectory(storage, engineId, crashed.lastSeenAt, crashed).catch(() => false);
      return true;
    }
  }
  return false;
}

/** Options of `PresenceWriter`. */
export type PresenceWriterOptions = {
  storage: Storage;
  engineId: string;
  identity: EngineIdentity;
  mode: EngineMode;
  /** Where the engine runs. */
  runtime: EngineRuntime;
  startedAt: number;
  /** Current time in epoch ms. */
  now: () => number;
  /** Called when a write fails (quota, closed database); the writer keeps trying on the next refresh. */
  onError: (error: unknown) => void;
};

/** What a presence write may change; fields left out keep their last value. */
export type PresenceUpdate = {
  status?: PresenceStatus;
  /** For `frozen`: when the stall ends. Cleared by any other status. */
  frozenUntil?: number;
  claimsHeld?: number;
  resultWaiters?: readonly ResultWaiterInfo[];
  counters?: EngineCounters;
};

/** Pending waiters first, then the `settledWaitersInPresence` most recently settled ones. */
export function waitersForPresence(waiters: readonly ResultWaiterInfo[]): ResultWaiterInfo[] {
  const pending = waiters.filter((waiter) => waiter.settled === null);
  const settled = waiters
    .filter((waiter) => waiter.settled !== null)
    .sort((a, b) => (b.settled?.at ?? 0) - (a.settled?.at ?? 0))
    .slice(0, settledWaitersInPresence);
  return [...pending, ...settled];
}

/**
 * Keeps one engine's presence record current. `write` stores the record with the latest values; the host
 * calls it on every heartbeat and on every status change. Writes never overlap: a write asked for while one
 * is in flight is folded into one more write after it.
 */
export class PresenceWriter {
  readonly #options: PresenceWriterOptions;
  #status: PresenceStatus = 'starting';
  #frozenUntil: number | undefined;
  #claimsHeld = 0;
  #resultWaiters: ResultWaiterInfo[] = [];
  #counters: EngineCounters = { ...emptyCounters };
  #inFlight: Promise<void> | null = null;
  #again = false;
  /** What the engine directory has of this engine: nothing yet, its start, or its stop too. */
  #directory: 'none' | 'started' | 'stopped' = 'none';

  constructor(options: PresenceWriterOptions) {
    this.#options = options;
  }

  get record(): EnginePresence {
    const { engineId, identity, mode, startedAt } = this.#options;
    return {
      engineId,
      label: identity.label,
      shortLabel: identity.shortLabel,
      color: identity.color,
      mode,
      status: this.#status,
      ...(this.#frozenUntil === undefined ? {} : { frozenUntil: this.#frozenUntil }),
      startedAt,
      lastSeenAt: this.#options.now(),
      claimsHeld: this.#claimsHeld,
      protocolVersion: PROTOCOL_VERSION,
      resultWaiters: this.#resultWaiters,
      counters: this.#counters,
      runtime: this.#options.runtime,
      ...(identity.ordinal >= 0 ? { ordinal: identity.ordinal } : {}),
    };
  }

  /** Stores the record with these values (unchanged fields keep their last value). */
  write(update: PresenceUpdate = {}): Promise<void> {
    if (update.status) {
      this.#status = update.status;
      this.#frozenUntil = update.status === 'frozen' ? update.frozenUntil : undefined;
    }
    if (update.claimsHeld !== undefined) this.#claimsHeld = update.claimsHeld;
    if (update.resultWaiters) this.#resultWaiters = waitersForPresence(update.resultWaiters);
    if (update.counters) this.#counters = { ...update.counters };
    if (this.#inFlight) {
      this.#again = true;
      return this.#inFlight;
    }
    const run = async () => {
      do {
        this.#again = false;
        try {
          const record = this.record;
          const ended = record.status === 'stopped' || record.status === 'crashed';
          // The directory entry goes with the first record, and once more with the stop time.
          const directory =
            this.#directory === 'none' || (ended && this.#directory === 'started')
              ? directoryPut(directoryEntryOf(record, ended ? record.lastSeenAt : null))
              : null;
          await this.#options.storage.batch([
            { type: 'put', key: presenceKey(this.#options.engineId), value: encodePresence(record) },
            ...(directory ? [directory] : []),
          ]);
          if (directory) this.#directory = ended ? 'stopped' : 'started';
        } catch (error) {
          this.#options.onError(error);
        }
      } while (this.#again);
    };
    this.#inFlight = run().finally(() => {
      this.#inFlight = null;
    });
    return this.#inFlight;
  }
}
