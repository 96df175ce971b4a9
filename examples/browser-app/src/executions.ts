/**
 * The demo's side-effect log: every time an upload step's activity function actually runs, it announces
 * itself on a BroadcastChannel, which every tab of the app hears (its own worker's and the other tabs'
 * workers'). This stands in for the real side effect (an HTTP call to a storage service) and lets the page
 * show — and the test check — how many times each step really ran, and on which tab's engine.
 *
 * It is instrumentation for the demo, not something a Shuttle app needs.
 */

/** One run of a step's activity function. */
export type Execution = {
  /** Unique per run of the function; the step's recorded result carries it, so it names the run that counted. */
  executionId: string;
  workflowId: string;
  step: string;
  attempt: number;
  /** The engine (tab) whose worker ran it. */
  engineId: string;
  /** When it started (Date.now()). */
  at: number;
};

const channelName = 'shuttle-example:executions';

let thisEngineId = 'unknown';
let channel: BroadcastChannel | null = null;

/** Called once by the worker: the engine whose activities this worker runs. */
export function setExecutingEngine(engineId: string): void {
  thisEngineId = engineId;
}

/** Called by an activity when it starts running: announces the run to every tab and returns it. */
export function announceExecution(run: { workflowId: string; step: string; attempt: number }): Execution {
  const execution: Execution = {
    executionId: crypto.randomUUID(),
    ...run,
    engineId: thisEngineId,
    at: Date.now(),
  };
  channel ??= new BroadcastChannel(channelName);
  channel.postMessage(execution);
  return execution;
}

/** On the page: calls `listener` for every run announced by any tab's worker. Returns the function that stops. */
export function listenToExecutions(listener: (execution: Execution) => void): () => void {
  const listening = new BroadcastChannel(channelName);
  listening.onmessage = (event: MessageEvent<Execution>) => listener(event.data);
  return () => listening.close();
}
