/**
 * Engine presence: how the engines of every tab sharing a database see each other. Each worker stores a
 * record under `engine:<engineId>` (label, colour, mode, status, start time, last heartbeat, claims held)
 * and refreshes it every second, directly through the storage (presence is not workflow state and is never
 * fenced).
 *
 * Guarantees:
 * - Labels are unique per database: `allocateEngineIdentity` takes the next number from a compare-and-swap
 *   counter (`studio:engine-counter`), so two tabs starting at the same instant never get one label, and a
 *   reloaded tab's new engine gets a new label (custody stays readable: "Tab A, then Tab D").
 * - Colours come from the Okabe–Ito palette, ordered so that consecutive engines differ in lightness as well
 *   as hue, and every chip also shows the label's letters: nobody has to tell engines apart by hue alone.
 * - A presence record that does not decode is skipped, never fatal: `readPresence` returns what it can.
 */
import type { Storage } from '../storage';
import { PROTOCOL_VERSION, type EngineMode, type EnginePresence, type PresenceStatus } from './protocol';

/** Prefix of presence records. */
export const presencePrefix = 'engine:';

/** The key of an engine's presence record. */
export function presenceKey(engineId: string): string {
  return presencePrefix + engineId;
}

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

/**
 * Takes the next engine label of the database. Retries a lost compare-and-swap race; a corrupt counter is
 * overwritten (it only names engines). Falls back to a label derived from the engine id if the store keeps
 * refusing, so a label never blocks an engine from starting.
 */
export async function allocateEngineIdentity(storage: Storage, engineId: string): Promise<EngineIdentity> {
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

export function encodePresence(presence: EnginePresence): string {
  return JSON.stringify(presence);
}

const statuses: readonly PresenceStatus[] = ['starting', 'running', 'frozen', 'stopped'];

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
  return {
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
  };
}

/** Every decodable presence record of the database, oldest engine first. */
export async function readPresence(storage: Storage): Promise<EnginePresence[]> {
  const entries = await storage.scan(presencePrefix);
  return entries
    .map(({ value }) => decodePresence(value))
    .filter((presence): presence is EnginePresence => presence !== null)
    .sort((a, b) => a.startedAt - b.startedAt);
}

/** Options of `PresenceWriter`. */
export type PresenceWriterOptions = {
  storage: Storage;
  engineId: string;
  identity: EngineIdentity;
  mode: EngineMode;
  startedAt: number;
  /** Current time in epoch ms. */
  now: () => number;
  /** Called when a write fails (quota, closed database); the writer keeps trying on the next refresh. */
  onError: (error: unknown) => void;
};

/**
 * Keeps one engine's presence record current. `write` stores the record with the latest status and claim
 * count; the host calls it on every heartbeat and on every status change. Writes never overlap: a write
 * asked for while one is in flight is folded into one more write after it.
 */
export class PresenceWriter {
  readonly #options: PresenceWriterOptions;
  #status: PresenceStatus = 'starting';
  #claimsHeld = 0;
  #inFlight: Promise<void> | null = null;
  #again = false;

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
      startedAt,
      lastSeenAt: this.#options.now(),
      claimsHeld: this.#claimsHeld,
      protocolVersion: PROTOCOL_VERSION,
    };
  }

  /** Stores the record with these values (unchanged fields keep their last value). */
  write(update: { status?: PresenceStatus; claimsHeld?: number } = {}): Promise<void> {
    if (update.status) this.#status = update.status;
    if (update.claimsHeld !== undefined) this.#claimsHeld = update.claimsHeld;
    if (this.#inFlight) {
      this.#again = true;
      return this.#inFlight;
    }
    const run = async () => {
      do {
        this.#again = false;
        try {
          await this.#options.storage.batch([
            { type: 'put', key: presenceKey(this.#options.engineId), value: encodePresence(this.record) },
          ]);
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
