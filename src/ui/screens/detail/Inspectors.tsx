/**
 * The workflow's data: its state (as of its last checkpoint), its input, and its result or error — each a
 * collapsible JSON view rendered as text — and its family: the parent, and the children it started, with
 * links.
 */
import { useState } from 'react';
import type { TimelineEntry, WorkflowDescription } from '../../../engine';
import { EmptyState } from '../../components/EmptyState';
import { JsonView } from '../../components/JsonView';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import styles from './Inspectors.module.css';

type Tab = 'state' | 'input' | 'result' | 'children';

type Child = { childId: string; workflowType: string; status: string | null; policy: string | null };

/** The children a workflow started, from its timeline (and the linked ones the record knows). */
export function childrenOf(workflow: WorkflowDescription, timeline: readonly TimelineEntry[]): Child[] {
  const children = new Map<string, Child>();
  for (const entry of timeline) {
    const detail = entry.detail as Record<string, unknown>;
    const childId = typeof detail.childId === 'string' ? detail.childId : null;
    if (!childId) continue;
    if (entry.kind === 'child-started')
      children.set(childId, {
        childId,
        workflowType: typeof detail.workflowType === 'string' ? detail.workflowType : '',
        status: null,
        policy: typeof detail.parentClosePolicy === 'string' ? detail.parentClosePolicy : null,
      });
    else if (entry.kind === 'child-completed') {
      const known = children.get(childId);
      if (known) known.status = typeof detail.status === 'string' ? detail.status : 'ended';
    }
  }
  for (const childId of workflow.linkedChildren)
    if (!children.has(childId))
      children.set(childId, { childId, workflowType: '', status: null, policy: 'terminate' });
  return [...children.values()];
}

export function Inspectors({
  workflow,
  timeline,
}: {
  workflow: WorkflowDescription;
  timeline: readonly TimelineEntry[];
}) {
  const children = childrenOf(workflow, timeline);
  const hasOutcome = workflow.result !== undefined || workflow.error !== undefined;
  // Until the person picks a tab, show the outcome once there is one, and the state before.
  const [picked, setTab] = useState<Tab | null>(null);
  const tab = picked ?? (hasOutcome ? 'result' : 'state');
  const tabs: { value: Tab; label: string; count?: number }[] = [
    { value: 'state', label: 'State' },
    { value: 'input', label: 'Input' },
    { value: 'result', label: workflow.error ? 'Error' : 'Result' },
    { value: 'children', label: 'Children', count: children.length },
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
              {workflow.error.details ? <JsonView value={workflow.error.details} expandDepth={1} /> : null}
              {workflow.error.stack ? (
                <details className={styles.stack}>
                  <summary>Stack</summary>
                  <pre>{workflow.error.stack}</pre>
                </details>
              ) : null}
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
        {tab === 'children' ? (
          <div className={styles.family}>
            {workflow.parentId ? (
              <p className={styles.caption}>
                Parent:{' '}
                <Link to={routes.workflow(workflow.parentId)} className={styles.mono}>
                  {workflow.parentId}
                </Link>
              </p>
            ) : null}
            {children.length === 0 ? (
              <EmptyState compact title="No children">
                This workflow has not started any child workflows.
              </EmptyState>
            ) : (
              <ul className={styles.children} data-testid="detail.children">
                {children.map((child) => (
                  <li key={child.childId}>
                    <Link
                      to={routes.workflow(child.childId)}
                      className={styles.mono}
                      testId="detail.child-link"
                    >
                      {child.childId}
                    </Link>
                    <span className={styles.childMeta}>
                      {child.workflowType}
                      {child.policy && child.policy !== 'await' ? ` · ${child.policy}` : ''}
                      {' · '}
                      {child.status ?? 'running'}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </div>
        ) : null}
      </div>
    </div>
  );
}
