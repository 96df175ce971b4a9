/**
 * Claims per engine over time, for the Engines screen's chart. The studio samples `engines()` on the client
 * (there is no stored history): every answer of the engines query adds a sample, at most one per second,
 * and the last ten minutes are kept. Sampling runs from the app root, so the chart has history as soon as
 * the screen opens.
 */
import { useSyncExternalStore } from 'react';
import type { EngineRecord } from '../../worker/protocol';

export type EngineSample = {
  at: number;
  /** Claims held per engine id (live engines only). */
  claims: Readonly<Record<string, number>>;
};

export const sampleWindowMs = 10 * 60_000;
const minIntervalMs = 1_000;

let samples: readonly EngineSample[] = [];
const listeners = new Set<() => void>();

/** Adds the sample `engines` make at `at`, dropping samples older than the window. Returns the new list. */
export function appendSample(
  list: readonly EngineSample[],
  engines: readonly EngineRecord[],
  at: number,
): readonly EngineSample[] {
  const last = list.at(-1);
  if (last && at - last.at < minIntervalMs) return list;
  const claims: Record<string, number> = {};
  for (const engine of engines)
    if (
      engine.alive !== false &&
      engine.status !== 'stopped' &&
      engine.status !== 'dead' &&
      engine.status !== 'crashed'
    )
      claims[engine.engineId] = engine.claimsHeld;
  const kept = list.filter((sample) => at - sample.at <= sampleWindowMs);
  return [...kept, { at, claims }];
}

/** Records a sample of `engines` (called with every answer of the engines query). */
export function recordEngineSample(engines: readonly EngineRecord[], at: number = Date.now()): void {
  const next = appendSample(samples, engines, at);
  if (next === samples) return;
  samples = next;
  for (const listener of [...listeners]) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Every sample of the window, oldest first. */
export function useEngineSamples(): readonly EngineSample[] {
  return useSyncExternalStore(subscribe, () => samples);
}
