// A Node program: the engine (`shuttle`) and the server runtime (`shuttle/server`).
import {
  createEngine,
  MemoryStorage,
  SimulatedClock,
  WorkflowFailedError,
  isTerminal,
  type Engine,
  type EngineEvent,
  type WorkflowDescription,
} from 'shuttle';
import { PostgresStorage, startWorker, type RunningWorker, type WorkerOptions } from 'shuttle/server';
import { greet } from './workflows.js';

export async function inMemory(): Promise<string> {
  const engine: Engine = await createEngine({
    storage: new MemoryStorage(),
    workflows: [greet],
    clock: new SimulatedClock(0),
  });
  const stop = engine.subscribe((event: EngineEvent) => void event.type);
  stop();
  const handle = await engine.start(greet, { name: 'ada' }, { id: 'greet-1' });
  try {
    const output = await handle.result();
    const text: string = output.text;
    return text;
  } catch (error) {
    if (error instanceof WorkflowFailedError) return error.message;
    throw error;
  } finally {
    const description: WorkflowDescription = await handle.describe();
    void isTerminal(description.status);
    await engine.shutdown();
  }
}

export async function onServers(databaseUrl: string | undefined): Promise<RunningWorker> {
  const options: WorkerOptions = {
    definitions: [greet],
    ...(databaseUrl === undefined ? { dataDir: '.data' } : { databaseUrl }),
  };
  const storage: Promise<PostgresStorage> = PostgresStorage.embedded({});
  void storage;
  return startWorker(options);
}
