/**
 * Signals sent but not consumed yet, as a table: (the workflow,) the signal's name, its payload — one line of
 * JSON, cut at `payloadPreviewLength` characters, with a "Show all" button that opens the whole payload
 * below the row —, when it was sent and by which engine. Used by the Pending work screen and a workflow's
 * Pending tab.
 */
import { Fragment, useId, useState } from 'react';
import { EngineTag } from '../EngineTag';
import { JsonView } from '../JsonView';
import { MiddleTruncate } from '../MiddleTruncate';
import { RelativeTime } from '../RelativeTime';
import { useEngineDirectory } from '../../data/engine-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { payloadPreview, type BufferedItem } from './pending-work';
import styles from './PendingTable.module.css';

export function BufferedSignalsTable({
  items,
  showWorkflow,
  label,
}: {
  items: readonly BufferedItem[];
  showWorkflow: boolean;
  label: string;
}) {
  const engines = useEngineDirectory();
  const idBase = useId();
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string) =>
    setOpen((before) => {
      const after = new Set(before);
      if (!after.delete(key)) after.add(key);
      return after;
    });
  const columns = showWorkflow ? 5 : 4;
  return (
    <table className={styles.table} aria-label={label} data-testid="pending.buffered">
      <thead>
        <tr>
          {showWorkflow ? <th scope="col">Workflow</th> : null}
          <th scope="col">Signal</th>
          <th scope="col">Payload</th>
          <th scope="col">Sent</th>
          <th scope="col">Sent by</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item, index) => {
          const preview = item.hasPayload ? payloadPreview(item.payload) : null;
          const shown = open.has(item.key);
          const payloadId = `${idBase}-payload-${index}`;
          return (
            <Fragment key={item.key}>
              <tr
                data-testid="pending.buffered-row"
                data-workflow-id={item.workflowId}
                data-signal={item.name}
                className={shown ? styles.opened : undefined}
              >
                {showWorkflow ? (
                  <td className={styles.workflow}>
                    <Link to={routes.workflow(item.workflowId)} className={styles.id} title={item.workflowId}>
                      <MiddleTruncate text={item.workflowId} />
                    </Link>
                    <span className={styles.type}>{item.workflowType}</span>
                  </td>
                ) : null}
                <td>
                  <span className={`${styles.kind} ${styles.buffered}`}>signal</span>{' '}
                  <span className={styles.name} data-testid="pending.buffered-name">
                    {item.name}
                  </span>
                </td>
                <td className={styles.payload}>
                  {preview ? (
                    <>
                      <code className={styles.preview} data-testid="pending.buffered-payload">
                        {preview.text}
                      </code>
                      {preview.truncated ? (
                        <button
                          type="button"
                          className={styles.more}
                          aria-expanded={shown}
                          aria-controls={shown ? payloadId : undefined}
                          onClick={() => toggle(item.key)}
                          data-testid="pending.buffered-show-all"
                        >
                          {shown ? 'Hide' : 'Show all'}
                        </button>
                      ) : null}
                    </>
                  ) : (
                    <span className={styles.none}>none</span>
                  )}
                </td>
                <td className={styles.time}>
                  <RelativeTime at={item.sentAt} testId="pending.buffered-sent" />
                </td>
                <td>
                  <EngineTag engineId={item.sentBy} engine={engines.get(item.sentBy)} />
                </td>
              </tr>
              {shown ? (
                <tr className={styles.full}>
                  <td colSpan={columns} id={payloadId} data-testid="pending.buffered-full">
                    <JsonView value={item.payload} expandDepth={3} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}
