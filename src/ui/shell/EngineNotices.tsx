/**
 * Page-wide notices about this tab's engine: it failed, crashed, stopped answering, shut down or is frozen
 * (each with what to do), or it is a viewer that observes without running workflows; and warnings pushed by
 * the worker that need a person (another tab runs a different build, storage trouble), dismissible.
 */
import type { ReactNode } from 'react';
import type { SerializedError } from '../../public';
import { explainError } from '../components/error-advice';
import { Notice } from '../components/Notice';
import { formatDuration } from '../components/time-format';
import { useConnection, useRestartThisTab, useThisEngine } from '../data/engine-queries';
import { useStudioMode } from '../data/studio-mode';
import { dismissWarning, useRecentWarnings } from '../data/engine-activity';
import { useNow } from '../state/now';
import { engineDisplayStatus } from './engine-status';

function reload() {
  location.reload();
}

function withEngine() {
  const url = new URL(location.href);
  url.searchParams.delete('engine');
  location.assign(url);
}

export function EngineNotices() {
  return (
    <>
      <EngineStatusNotice />
      <WorkerWarnings />
    </>
  );
}

/** Warnings that concern the whole tab; claim losses are shown on their workflow instead. */
const pageWideWarnings = new Set([
  'VersionMismatchWarning',
  'StorageWarning',
  'PresenceWarning',
  'WorkerWarning',
]);

function WorkerWarnings() {
  const warnings = useRecentWarnings().filter((warning) => pageWideWarnings.has(warning.name));
  const latest = new Map<string, (typeof warnings)[number]>();
  for (const warning of warnings) if (!latest.has(warning.name)) latest.set(warning.name, warning);
  return (
    <>
      {[...latest.values()].map((warning) => (
        <Notice
          key={warning.id}
          tone="warning"
          title={
            warning.name === 'VersionMismatchWarning'
              ? 'Another tab runs a different build of the studio'
              : warning.name === 'StorageWarning'
                ? 'Storage trouble'
                : 'The engine worker reported a problem'
          }
          testId="shell.worker-warning"
          action={
            warning.name === 'VersionMismatchWarning'
              ? { label: 'Reload this tab', onClick: reload }
              : { label: 'Dismiss', onClick: () => dismissWarning(warning.id) }
          }
        >
          {warning.message}
        </Notice>
      ))}
    </>
  );
}

function FrozenNotice({ until }: { until: number | undefined }) {
  const now = useNow();
  const left =
    until !== undefined && until > now ? ` for another ${formatDuration(until - now, { coarse: true })}` : '';
  return (
    <Notice tone="warning" title={`This tab’s engine is frozen${left}`} testId="shell.engine-frozen">
      Its worker is stalled on purpose (a chaos freeze): it renews no claims and answers nothing. Once its
      claims expire, other tabs take its workflows over; when it wakes up, its late writes are refused by the
      epoch fence.
    </Notice>
  );
}

/**
 * Server mode: the page runs no engine, so there is nothing of its own to be frozen, crashed or a viewer;
 * only the connection to the studio server can be lost (then: reload, or open the URL the server printed).
 */
function ServerConnectionNotice() {
  const { data: hello, error } = useThisEngine();
  const connection = useConnection();
  const status = engineDisplayStatus(connection, hello);
  if (error && !hello)
    return (
      <EngineProblem title="The studio server did not answer" act="Reload" onAct={reload}>
        {error.message}
      </EngineProblem>
    );
  if (status.state === 'crashed' || status.state === 'unresponsive')
    return (
      <EngineProblem title="The connection to the studio server was lost" act="Reload" onAct={reload}>
        {status.message} The workflows carry on in the server’s worker processes; reload to reconnect, or open
        the URL that <code>shuttle serve</code> printed.
      </EngineProblem>
    );
  if (status.state === 'failed' || status.state === 'stopped')
    return (
      <EngineProblem title="The studio server’s observer stopped" act="Reload" onAct={reload}>
        {status.message ?? 'Restart shuttle serve, then reload.'}
      </EngineProblem>
    );
  return null;
}

function EngineStatusNotice() {
  const { server } = useStudioMode();
  return server ? <ServerConnectionNotice /> : <TabEngineStatusNotice />;
}

function TabEngineStatusNotice() {
  const { data: engine, error } = useThisEngine();
  const connection = useConnection();
  const restartThisTab = useRestartThisTab();
  const status = engineDisplayStatus(connection, engine);
  // A new engine in this tab, without reloading the page; reload if even that fails (awaited through the
  // promise, which settles even if this notice is gone by then).
  const restart = () => {
    restartThisTab.mutateAsync().catch(reload);
  };
  if (error && !engine)
    return (
      <EngineProblem title="This tab’s engine is not available" act="Reload tab" onAct={reload}>
        {error.message}
      </EngineProblem>
    );
  switch (status.state) {
    case 'frozen':
      return <FrozenNotice until={engine?.status.frozenUntil} />;
    case 'crashed':
    case 'unresponsive':
      return (
        <EngineProblem title="This tab’s engine worker stopped" act="Start a new engine" onAct={restart}>
          {status.message}
          {status.message?.includes('other tabs')
            ? ''
            : ' Workflows it owned move to other open tabs by themselves. Start a new engine here, or reload the tab.'}
        </EngineProblem>
      );
    case 'failed':
      return (
        <EngineProblem title="This tab’s engine could not run" act="Reload tab" onAct={reload}>
          {status.message}
          {engine?.status.error ? ` ${explainError(deserialized(engine.status.error)).advice ?? ''}` : ''}
        </EngineProblem>
      );
    case 'stopped':
      return (
        <EngineProblem
          title="This tab’s engine has shut down"
          tone="info"
          act="Start a new engine"
          onAct={restart}
        >
          Its claims were released; other tabs have taken its workflows over.
        </EngineProblem>
      );
    default:
      return engine?.mode === 'viewer' ? (
        <Notice
          tone="warning"
          title="Viewer mode"
          testId="shell.viewer-notice"
          action={{ label: 'Run an engine here', onClick: withEngine }}
        >
          This tab observes without running workflows. Workflows started here are run by the engines of other
          tabs.
        </Notice>
      ) : null;
  }
}

/** What went wrong with this tab's engine (or the studio server's connection), and the one thing to do. */
function EngineProblem({
  title,
  tone = 'danger',
  act,
  onAct,
  children,
}: {
  title: string;
  tone?: 'danger' | 'info';
  act: string;
  onAct: () => void;
  children: ReactNode;
}) {
  return (
    <Notice tone={tone} title={title} testId="shell.engine-problem" action={{ label: act, onClick: onAct }}>
      {children}
    </Notice>
  );
}

/** An error as the worker sent it, with its detail fields (`code` for storage errors), for `explainError`. */
function deserialized(error: SerializedError): Error {
  return Object.assign(new Error(error.message), error.details ?? {}, { name: error.name });
}
