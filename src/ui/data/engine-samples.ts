/**
 * Claims per engine over time, for the Engines screen's chart. The studio samples `engines()` on the client
 * (there is no stored history): every answer of the engines query adds a sample, at most one per second,
 * and the last ten minutes are kept, in a zustand store. Sampling runs from the app root
 * (`useEngineSampling`), so the chart has history as soon as the screen opens.
 */
import { useEffect } from 'react';
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { EngineRecord } from '../../public/browser';
import { isEngineLive, useEngines } from './engine-queries';

export type EngineSample = {
  at: number;
  /** Claims held per engine id (live engines only). */
  claims: Readonly<Record<string, number>>;
};

export const sampleWindowMs = 10 * 60_000;
const minIntervalMs = 1_000;

type Samples = { samples: readonly EngineSample[] };

/** Written only by `recordEngineSample`. */
const samplesStore = createStore<Samples>()(() => ({ samples: [] }));

/** Adds the sample `engines` make at `at`, dropping samples older than the window. Returns the new list. */
export function appendSample(
  list: readonly EngineSample[],
  engines: readonly EngineRecord[],
  at: number,
): readonly EngineSample[] {
  const last = list.at(-1);
  if (last && at - last.at < minIntervalMs) return list;
  const claims: Record<string, number> = {};
  for (const engine of engines) if (isEngineLive(engine)) claims[engine.engineId] = engine.claimsHeld;
  const kept = list.filter((sample) => at - sample.at <= sampleWindowMs);
  return [...kept, { at, claims }];
}

/** Records a sample of `engines` (called with every answer of the engines query). */
export function recordEngineSample(engines: readonly EngineRecord[], at: number = Date.now()): void {
  const { samples } = samplesStore.getState();
  const next = appendSample(samples, engines, at);
  if (next !== samples) samplesStore.setState({ samples: next });
}

/** Every sample of the window, oldest first (for code outside React). */
export function engineSamples(): readonly EngineSample[] {
  return samplesStore.getState().samples;
}

/** Every sample of the window, oldest first. */
export function useEngineSamples(): readonly EngineSample[] {
  return useStore(samplesStore, (state) => state.samples);
}

/** Samples every answer of the engines query while the calling component is mounted (the app root). */
export function useEngineSampling(): void {
  const engines = useEngines();
  useEffect(() => {
    if (engines.data) recordEngineSample(engines.data, engines.dataUpdatedAt);
  }, [engines.data, engines.dataUpdatedAt]);
}
