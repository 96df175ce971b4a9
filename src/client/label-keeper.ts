/**
 * What lets a browser tab keep its engine label (`Tab A`) for its lifetime: the tab's `sessionStorage` (kept
 * across reloads of that tab, copied when the tab is duplicated) remembers the label of its engine, and
 * whether that engine has ended (the page was hidden for good, frozen away, or the engine restarted). Only
 * an ended engine's label is asked for again (`hello`'s `keepLabel`), so a duplicated tab, whose copy says
 * its original still runs, takes a new one. Best effort: without `sessionStorage` a tab gets a new label.
 */
import type { KeepLabel, WorkerConfig } from '../protocol';

type StoredLabel = { label: string; engineId: string; ended: boolean };

const key = (config: WorkerConfig) => `shuttle.tab-label:${config.databaseName}`;

function read(config: WorkerConfig): StoredLabel | null {
  try {
    const value: unknown = JSON.parse(globalThis.sessionStorage?.getItem(key(config)) ?? 'null');
    if (typeof value !== 'object' || value === null) return null;
    const { label, engineId, ended } = value as Record<string, unknown>;
    return typeof label === 'string' && typeof engineId === 'string'
      ? { label, engineId, ended: ended === true }
      : null;
  } catch {
    return null;
  }
}

function write(config: WorkerConfig, value: StoredLabel): void {
  try {
    globalThis.sessionStorage?.setItem(key(config), JSON.stringify(value));
  } catch {
    // Storage full or denied: the next engine of this tab gets a new label.
  }
}

/** The label this tab's next engine should keep (its ended engine's), or null for a new one. */
export function labelToKeep(config: WorkerConfig): KeepLabel | null {
  const stored = read(config);
  return stored?.ended ? { label: stored.label, previousEngineId: stored.engineId } : null;
}

/** This tab's engine `engineId` runs under `label`. */
export function rememberLabel(config: WorkerConfig, label: string, engineId: string): void {
  write(config, { label, engineId, ended: false });
}

/** This tab's engine has ended: its label is free for the tab's next engine. */
export function labelEnded(config: WorkerConfig): void {
  const stored = read(config);
  if (stored && !stored.ended) write(config, { ...stored, ended: true });
}
