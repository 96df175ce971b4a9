/**
 * Page-wide notices about this tab's engine: it failed, crashed, stopped answering or shut down (each with
 * what to do), or it is a viewer that observes without running workflows.
 */
import { Notice } from '../components/Notice';
import { useConnection, useThisEngine } from '../data/engine-queries';
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
  const { data: engine, error } = useThisEngine();
  const connection = useConnection();
  const status = engineDisplayStatus(connection, engine);
  if (error && !engine)
    return (
      <Notice
        tone="danger"
        title="This tab’s engine is not available"
        testId="shell.engine-problem"
        action={{ label: 'Reload tab', onClick: reload }}
      >
        {error.message}
      </Notice>
    );
  switch (status.state) {
    case 'crashed':
    case 'unresponsive':
      return (
        <Notice
          tone="danger"
          title="This tab’s engine worker stopped"
          testId="shell.engine-problem"
          action={{ label: 'Reload tab', onClick: reload }}
        >
          {status.message} Workflows it owned move to other open tabs by themselves.
        </Notice>
      );
    case 'failed':
      return (
        <Notice
          tone="danger"
          title="This tab’s engine could not run"
          testId="shell.engine-problem"
          action={{ label: 'Reload tab', onClick: reload }}
        >
          {status.message}
        </Notice>
      );
    case 'stopped':
      return (
        <Notice
          tone="info"
          title="This tab’s engine has shut down"
          testId="shell.engine-problem"
          action={{ label: 'Start a new engine', onClick: reload }}
        >
          Its claims were released; other tabs have taken its workflows over.
        </Notice>
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
