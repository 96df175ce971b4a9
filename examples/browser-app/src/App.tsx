import { useEffect, useState } from 'react';
import { isTerminal, type WorkflowSummary } from 'shuttle/browser';
import { useShuttleClient, useStartWorkflow, useWorkflow, useWorkflows } from 'shuttle/react';
import { useExecutions } from './execution-log';
import type { UploadResult, UploadState } from './workflows';

export function App() {
  const thisEngine = useThisEngineId();
  const [selected, setSelected] = useState<string | null>(null);
  const start = useStartWorkflow();
  const { data: jobs = [] } = useWorkflows({ workflowType: 'upload' });

  const startUpload = () =>
    start.mutate(
      { workflowType: 'upload', input: { fileName: `photo-${jobs.length + 1}.jpg` } },
      { onSuccess: ({ workflowId }) => setSelected(workflowId) },
    );

  return (
    <main>
      <h1>Uploads that survive their tab</h1>
      <p>
        Open this page in two tabs, start an upload here, then close this tab: the other tab finishes the job.
        This tab's engine: <EngineId engineId={thisEngine} testId="this-engine" />
      </p>
      <button type="button" onClick={startUpload} disabled={thisEngine === null || start.isPending}>
        Start upload
      </button>
      {start.error && <p role="alert">Could not start: {start.error.message}</p>}

      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Jobs</h2>
        {jobs.length === 0 ? (
          <p>No uploads yet.</p>
        ) : (
          <ul aria-labelledby="jobs-heading">
            {jobs.map((job) => (
              <li key={job.workflowId}>
                <button
                  type="button"
                  aria-pressed={job.workflowId === selected}
                  onClick={() => setSelected(job.workflowId)}
                >
                  {job.workflowId}
                </button>{' '}
                {job.status} · {whoOwns(job, thisEngine)}
              </li>
            ))}
          </ul>
        )}
      </section>

      {selected !== null && <JobView workflowId={selected} thisEngine={thisEngine} />}
      <ExecutionLog thisEngine={thisEngine} />
    </main>
  );
}

/** One upload, live: status, progress (`ctx.state`), which tab runs it, and its result. */
function JobView({ workflowId, thisEngine }: { workflowId: string; thisEngine: string | null }) {
  const { data: job, error } = useWorkflow(workflowId);
  if (error) return <p role="alert">{error.message}</p>;
  if (!job) return <p>Loading {workflowId}…</p>;
  const state = job.state as Partial<UploadState>;
  const completed = state.completed ?? 0;
  const total = state.total ?? 0;
  const result = job.status === 'completed' ? (job.result as unknown as UploadResult) : null;
  return (
    <section aria-labelledby="job-heading" data-testid="job">
      <h2 id="job-heading">
        Job <code data-testid="job-id">{job.workflowId}</code>
      </h2>
      <dl>
        <dt>Status</dt>
        <dd data-testid="job-status">{job.status}</dd>
        <dt>Progress</dt>
        <dd>
          <progress max={total || 1} value={completed} aria-label="Progress" />{' '}
          <span data-testid="job-progress" data-completed={completed}>
            {completed} / {total} steps
          </span>
          {state.current ? ` — now: ${state.current}` : ''}
        </dd>
        <dt>Runs on</dt>
        <dd data-testid="job-owner" data-engine-id={job.owner?.engineId ?? ''}>
          {whoOwns(job, thisEngine)}
          {job.owner && (
            <>
              {' '}
              (engine <EngineId engineId={job.owner.engineId} />)
            </>
          )}
        </dd>
      </dl>
      {result && (
        <>
          <h3 id="result-heading">Result: {result.fileName}</h3>
          <ol aria-labelledby="result-heading" data-testid="job-result">
            {result.steps.map((receipt) => (
              <li
                key={receipt.step}
                data-step={receipt.step}
                data-execution-id={receipt.executionId}
                data-engine-id={receipt.engineId}
              >
                {receipt.step}: run {receipt.executionId.slice(0, 8)} on{' '}
                {receipt.engineId === thisEngine ? 'this tab' : 'another tab'}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

/** Every time a step's code actually ran, on any tab (the demo's side-effect log, executions.ts). */
function ExecutionLog({ thisEngine }: { thisEngine: string | null }) {
  const executions = useExecutions();
  return (
    <section aria-labelledby="executions-heading">
      <h2 id="executions-heading">Step runs seen from this tab</h2>
      <table aria-labelledby="executions-heading" data-testid="executions">
        <thead>
          <tr>
            <th>Job</th>
            <th>Step</th>
            <th>Attempt</th>
            <th>Ran on</th>
            <th>Run</th>
          </tr>
        </thead>
        <tbody>
          {executions.map((execution) => (
            <tr
              key={execution.executionId}
              data-workflow-id={execution.workflowId}
              data-step={execution.step}
              data-execution-id={execution.executionId}
              data-engine-id={execution.engineId}
              data-at={execution.at}
            >
              <td>{execution.workflowId}</td>
              <td>{execution.step}</td>
              <td>{execution.attempt}</td>
              <td>{execution.engineId === thisEngine ? 'this tab' : 'another tab'}</td>
              <td>{execution.executionId.slice(0, 8)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function EngineId({ engineId, testId }: { engineId: string | null; testId?: string }) {
  return (
    <code title={engineId ?? undefined} data-testid={testId} data-engine-id={engineId ?? ''}>
      {engineId === null ? 'starting…' : engineId.slice(0, 8)}
    </code>
  );
}

/** Which tab runs a job: this one, another one, none right now (between tabs), or none since it ended. */
function whoOwns(
  { owner, status }: Pick<WorkflowSummary, 'owner' | 'status'>,
  thisEngine: string | null,
): string {
  if (isTerminal(status)) return 'no tab (finished)';
  if (owner === null) return 'no tab right now';
  return owner.engineId === thisEngine ? 'this tab' : 'another tab';
}

/** This tab's engine id: known once the engine answers, new if the tab's engine is ever replaced. */
function useThisEngineId(): string | null {
  const client = useShuttleClient();
  const [engineId, setEngineId] = useState(client.engineId);
  useEffect(() => {
    let current = true;
    client.ready.then(
      (hello) => current && setEngineId(hello.engineId),
      () => undefined,
    );
    const stop = client.onEngineChange((hello) => setEngineId(hello.engineId));
    return () => {
      current = false;
      stop();
    };
  }, [client]);
  return engineId;
}
