/**
 * A workflow's family as a tree: its ancestors (parent, the parent's parent, … up to the root), itself, and
 * below it the children it started — each with its type and status now, and a way to open its own children
 * (read on demand from that child's timeline), down to any depth. Every node links to its workflow.
 */
import { useState } from 'react';
import type { TimelineEntry, WorkflowDescription } from '../../../public';
import { EmptyState } from '../../components/EmptyState';
import { MiddleTruncate } from '../../components/MiddleTruncate';
import { StatusBadge } from '../../components/StatusBadge';
import { maxAncestors, useChildTimeline, useWorkflowAncestors } from '../../data/family-queries';
import { useWorkflowDescription } from '../../data/workflow-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import styles from './Inspectors.module.css';

/** How many children of one workflow are listed (the rest are counted). */
const maxChildren = 100;

export type FamilyChild = { childId: string; workflowType: string; policy: string | null };

/** The children a workflow started, from its timeline (and the linked ones the record knows), in order. */
export function familyChildren(
  workflow: Pick<WorkflowDescription, 'linkedChildren'>,
  timeline: readonly TimelineEntry[],
): FamilyChild[] {
  const children = new Map<string, FamilyChild>();
  for (const entry of timeline) {
    if (entry.kind !== 'child-started') continue;
    const { childId, workflowType, parentClosePolicy } = entry.detail;
    children.set(childId, { childId, workflowType, policy: parentClosePolicy });
  }
  for (const childId of workflow.linkedChildren)
    if (!children.has(childId)) children.set(childId, { childId, workflowType: '', policy: 'terminate' });
  return [...children.values()];
}

export function FamilyTree({
  workflow,
  timeline,
}: {
  workflow: WorkflowDescription;
  timeline: readonly TimelineEntry[];
}) {
  const ancestors = useWorkflowAncestors(workflow.workflowId, workflow.parentId);
  const chain = ancestors.data?.chain ?? [];
  const children = familyChildren(workflow, timeline);
  const depth = chain.length + (ancestors.data?.missing ? 1 : 0);
  return (
    <div className={styles.family} data-testid="detail.family">
      {workflow.parentId && ancestors.isPending ? (
        <p className={styles.caption}>Reading its ancestors…</p>
      ) : null}
      {ancestors.data?.cut ? (
        <p className={styles.caption}>Only its {maxAncestors} nearest ancestors are shown.</p>
      ) : null}
      <ul className={styles.tree} aria-label="Parent and child workflows">
        {ancestors.data?.missing ? (
          <li className={styles.treeRow} style={{ paddingLeft: 6 }}>
            <span className={styles.treeMain}>
              <span className={styles.treeId}>
                <MiddleTruncate text={ancestors.data.missing} />
              </span>
              <span className={styles.treeMeta}>no longer stored</span>
            </span>
          </li>
        ) : null}
        {chain.map((ancestor, index) => (
          <li
            key={ancestor.workflowId}
            className={styles.treeRow}
            style={{ paddingLeft: 6 + (index + (ancestors.data?.missing ? 1 : 0)) * 18 }}
            data-testid="detail.family-ancestor"
            data-workflow-id={ancestor.workflowId}
          >
            <Branch depth={index + (ancestors.data?.missing ? 1 : 0)} />
            <span className={styles.treeMain}>
              <Link
                to={routes.workflow(ancestor.workflowId)}
                className={styles.treeId}
                title={ancestor.workflowId}
              >
                <MiddleTruncate text={ancestor.workflowId} />
              </Link>
              <span className={styles.treeMeta}>
                {ancestor.workflowType} v{ancestor.version}
              </span>
            </span>
            <StatusBadge status={ancestor.status} />
          </li>
        ))}
        <li
          aria-current="page"
          className={`${styles.treeRow} ${styles.treeSelf}`}
          style={{ paddingLeft: 6 + depth * 18 }}
          data-testid="detail.family-self"
        >
          <Branch depth={depth} />
          <span className={styles.treeMain}>
            <span className={styles.treeId} title={workflow.workflowId}>
              <MiddleTruncate text={workflow.workflowId} />
            </span>
            <span className={styles.treeMeta}>
              {workflow.workflowType} v{workflow.version} · this workflow
            </span>
          </span>
          <StatusBadge status={workflow.status} />
        </li>
        <Children items={children} depth={depth + 1} />
      </ul>
      {children.length === 0 ? (
        <EmptyState compact title="No children">
          This workflow has not started any child workflows.
        </EmptyState>
      ) : null}
    </div>
  );
}

function Branch({ depth }: { depth: number }) {
  return depth > 0 ? (
    <span className={styles.branch} aria-hidden>
      └
    </span>
  ) : null;
}

function Children({ items, depth }: { items: readonly FamilyChild[]; depth: number }) {
  return (
    <>
      {items.slice(0, maxChildren).map((child) => (
        <ChildNode key={child.childId} child={child} depth={depth} />
      ))}
      {items.length > maxChildren ? (
        <li className={styles.caption} style={{ paddingLeft: 6 + depth * 18 }}>
          … and {items.length - maxChildren} more
        </li>
      ) : null}
    </>
  );
}

/** A child: its type and status now; opened, its own children (read from its timeline). */
function ChildNode({ child, depth }: { child: FamilyChild; depth: number }) {
  const [open, setOpen] = useState(false);
  const description = useWorkflowDescription(child.childId);
  const timeline = useChildTimeline(child.childId, open);
  const grandchildren =
    open && description.data && timeline.data ? familyChildren(description.data, timeline.data) : null;
  const gone = description.error?.name === 'WorkflowNotFoundError';
  return (
    <>
      <li
        className={styles.treeRow}
        style={{ paddingLeft: 6 + depth * 18 }}
        data-testid="detail.family-child"
        data-workflow-id={child.childId}
        data-depth={depth}
      >
        <Branch depth={depth} />
        {gone ? null : (
          <button
            type="button"
            className={styles.treeToggle}
            aria-label={`${open ? 'Hide' : 'Show'} the children of ${child.childId}`}
            aria-expanded={open}
            onClick={() => setOpen(!open)}
            data-testid="detail.family-toggle"
          >
            {open ? '▾' : '▸'}
          </button>
        )}
        <span className={styles.treeMain}>
          <Link
            to={routes.workflow(child.childId)}
            className={styles.treeId}
            title={child.childId}
            testId="detail.child-link"
          >
            <MiddleTruncate text={child.childId} />
          </Link>
          <span className={styles.treeMeta}>
            {description.data
              ? `${description.data.workflowType} v${description.data.version}`
              : child.workflowType}
            {child.policy && child.policy !== 'await' ? ` · ${child.policy}` : ''}
            {gone ? ' · no longer stored' : ''}
          </span>
        </span>
        {description.data ? <StatusBadge status={description.data.status} /> : null}
      </li>
      {grandchildren ? (
        grandchildren.length > 0 ? (
          <Children items={grandchildren} depth={depth + 1} />
        ) : (
          <li className={styles.caption} style={{ paddingLeft: 6 + (depth + 1) * 18 }}>
            no children
          </li>
        )
      ) : null}
    </>
  );
}
