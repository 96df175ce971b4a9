// A web page: the page side of the browser runtime (`shuttle/browser`), no engine on the page.
import { connectBrowserEngine, isTerminal, type ShuttleClient, type WorkflowStatus } from 'shuttle/browser';

export async function checkout(): Promise<WorkflowStatus> {
  const client: ShuttleClient = connectBrowserEngine({
    worker: () => new Worker(new URL('./web-worker.ts', import.meta.url), { type: 'module' }),
    databaseName: 'my-app',
  });
  await client.ready;
  const started = await client.api.start({ workflowType: 'greet', input: { name: 'ada' } });
  const description = await client.api.describe({ workflowId: started.workflowId });
  if (!isTerminal(description.status))
    await client.api.signal({ workflowId: started.workflowId, name: 'go' });
  const unsubscribe = client.subscribe((message) => void message.kind);
  unsubscribe();
  return description.status;
}
