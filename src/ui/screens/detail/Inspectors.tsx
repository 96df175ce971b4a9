/**
 * The workflow's data: its state (as of its last checkpoint), its input, and its result or error — each a
 * collapsible JSON view rendered as text —, its open operations (attempts, due times: pending-work.ts) and
 * the signals buffered for it (sent, not consumed yet), and its family as a tree (FamilyTree.tsx): its ancestors, and
 * the children it started, down to any depth, with links.
 */
import { useState } from 'react';
import type { TimelineEntry, WorkflowDescription } from '../../../public';
import { EmptyState } from '../../components/EmptyState';
import { JsonView } from '../../components/JsonView';
import styles from './Inspectors.module.css';
import { detailsShown } from './stack-lines';
import { StackView } from './StackView';
import { familyChildren, FamilyTree } from './FamilyTree';
import { BufferedSignalsTable } from '../../components/pending/BufferedSignals';
import { PendingTable } from '../../components/pending/PendingTable';
import { bufferedOf, byDue, pendingOf } from '../../components/pending/pending-work';

type Tab = 'state' | 'input' | 'result' | 'pending' | 'children';

export function Inspectors({
  workflow,
  timeline,
}: {
  workflow: WorkflowDescription;
  timeline: readonly TimelineEntry[];
}) {
  const children = familyChildren(workflow, timeline);
  const pending = pendingOf(workflow).sort(byDue);
  const buffered = bufferedOf(workflow);
  const hasOutcome = workflow.result !== undefined || workflow.error !== undefined;
  // Until the person picks a tab, show the outcome once there is one, and the state before.
  const [picked, setTab] = useState<Tab | null>(null);
  const tab = picked ?? (hasOutcome ? 'result' : 'state');
  const tabs: { value: Tab; label: string; count?: number }[] = [
    { value: 'state', label: 'State' },
    { value: 'input', label: 'Input' },
    { value: 'result', label: workflow.error ? 'Error' : 'Result' },
    { value: 'pending', label: 'Pending', count: pending.length + buffered.length },
    { value: 'children', label: 'Family', count: children.length },
  ];
  return (
    <div className={styles.card}>
      <div className={styles.tabs} role="tablist" aria-label="Workflow data">
        {tabs.map((option) => (
          <button
            key={option.value}
            type="button"
            role="tab"
            id={`inspector-tab-${option.value}`}
            aria-selected={tab === option.value}
            aria-controls="inspector-panel"
            className={styles.tab}
            onClick={() => setTab(option.value)}
            data-testid={`detail.tab-${option.value}`}
          >
            {option.label}
            {option.count ? <span className={styles.count}>{option.count}</span> : null}
            {option.value === 'result' && workflow.error ? (
              <span className={styles.errorDot} aria-hidden />
            ) : null}
          </button>
        ))}
      </div>
      <div
        className={styles.panel}
        role="tabpanel"
        id="inspector-panel"
        aria-labelledby={`inspector-tab-${tab}`}
      >
        {tab === 'state' ? (
          Object.keys(workflow.state).length === 0 ? (
            <EmptyState compact title="No state yet">
              The workflow’s <code>ctx.state</code> is empty at its last checkpoint.
            </EmptyState>
          ) : (
            <>
              <p className={styles.caption}>As of its last checkpoint (operation #{workflow.position}).</p>
              <JsonView value={workflow.state} testId="detail.state" />
            </>
          )
        ) : null}
        {tab === 'input' ? (
          workflow.input === undefined ? (
            <EmptyState compact title="No input">
              It was started without an input.
            </EmptyState>
          ) : (
            <JsonView value={workflow.input} testId="detail.input" />
          )
        ) : null}
        {tab === 'result' ? (
          workflow.error ? (
            <div data-testid="detail.error">
              <p className={styles.errorTitle}>{workflow.error.name}</p>
              <pre className={styles.errorMessage}>{workflow.error.message}</pre>
              {workflow.error.details ? (
                <JsonView value={detailsShown(workflow.error)} expandDepth={1} />
              ) : null}
              <StackView error={workflow.error} testId="detail.error-stack" />
            </div>
          ) : workflow.result !== undefined ? (
            <JsonView value={workflow.result} testId="detail.result" />
          ) : (
            <EmptyState
              compact
              title={workflow.status === 'completed' ? 'It returned nothing' : 'No result yet'}
              testId="detail.no-result"
            >
              {workflow.status === 'completed'
                ? 'The workflow completed without a return value.'
                : 'The result appears here when the workflow completes.'}
            </EmptyState>
          )
        ) : null}
        {tab === 'pending' ? (
          <>
            {pending.length === 0 ? (
              <EmptyState compact title="Nothing pending" testId="detail.no-pending">
                {workflow.status === 'running'
                  ? 'It waits on no operation right now.'
                  : `It is ${workflow.status}: it waits on nothing.`}
              </EmptyState>
            ) : (
              <PendingTable items={pending} showWorkflow={false} label="Its open operations" />
            )}
            {buffered.length > 0 ? (
              <>
                <p className={styles.caption}>
                  Buffered signals: sent, not consumed yet. It takes the oldest of a name when it waits for a
                  signal of that name.
                  {workflow.bufferedSignalsMore ? ' More are buffered: the first 100 are listed.' : ''}
                </p>
                <BufferedSignalsTable items={buffered} showWorkflow={false} label="Its buffered signals" />
              </>
            ) : null}
          </>
        ) : null}
        {tab === 'children' ? <FamilyTree workflow={workflow} timeline={timeline} /> : null}
      </div>
    </div>
  );
}
