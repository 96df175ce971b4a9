/**
 * A collapsible view of JSON data (workflow state, input, result, errors). Everything is rendered as text —
 * strings from workflows never become HTML. Large objects and arrays show their first entries and say how
 * many more there are; nodes deeper than `expandDepth` start collapsed.
 */
import { useState } from 'react';
import styles from './JsonView.module.css';

export type JsonViewProps = {
  value: unknown;
  /** Levels open at first. Default 2. */
  expandDepth?: number;
  testId?: string;
};

const pageSize = 100;

export function JsonView({ value, expandDepth = 2, testId }: JsonViewProps) {
  return (
    <div className={styles.view} data-testid={testId}>
      <Node value={value} depth={0} expandDepth={expandDepth} name={null} last />
    </div>
  );
}

type NodeProps = { value: unknown; depth: number; expandDepth: number; name: string | null; last: boolean };

function Node({ value, depth, expandDepth, name, last }: NodeProps) {
  const [open, setOpen] = useState(depth < expandDepth);
  const [shown, setShown] = useState(pageSize);
  const key =
    name === null ? null : (
      <>
        <span className={styles.key}>{/^\d+$/.test(name) ? name : JSON.stringify(name)}</span>
        <span className={styles.punct}>: </span>
      </>
    );
  const comma = last ? null : <span className={styles.punct}>,</span>;
  if (value === null || typeof value !== 'object')
    return (
      <div className={styles.line}>
        {key}
        <Scalar value={value} />
        {comma}
      </div>
    );
  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray
    ? (value as unknown[]).map((item, index) => [String(index), item])
    : Object.entries(value as Record<string, unknown>);
  const [openMark, closeMark] = isArray ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0)
    return (
      <div className={styles.line}>
        {key}
        <span className={styles.punct}>
          {openMark}
          {closeMark}
        </span>
        {comma}
      </div>
    );
  const summary = isArray
    ? `${entries.length} item${entries.length === 1 ? '' : 's'}`
    : `${entries.length} key${entries.length === 1 ? '' : 's'}`;
  return (
    <div>
      <div className={styles.line}>
        <button
          type="button"
          className={styles.toggle}
          aria-expanded={open}
          aria-label={`${open ? 'Collapse' : 'Expand'} ${name ?? 'value'}`}
          onClick={() => setOpen(!open)}
        >
          <span className={`${styles.caret} ${open ? styles.caretOpen : ''}`} aria-hidden>
            ▸
          </span>
        </button>
        {key}
        <span className={styles.punct}>{openMark}</span>
        {open ? null : (
          <>
            <button type="button" className={styles.summary} onClick={() => setOpen(true)}>
              {summary}
            </button>
            <span className={styles.punct}>{closeMark}</span>
            {comma}
          </>
        )}
      </div>
      {open ? (
        <>
          <div className={styles.children}>
            {entries.slice(0, shown).map(([childName, child], index) => (
              <Node
                key={childName}
                name={childName}
                value={child}
                depth={depth + 1}
                expandDepth={expandDepth}
                last={index === Math.min(shown, entries.length) - 1 && shown >= entries.length}
              />
            ))}
            {entries.length > shown ? (
              <button type="button" className={styles.more} onClick={() => setShown(shown + pageSize)}>
                … {entries.length - shown} more
              </button>
            ) : null}
          </div>
          <div className={styles.line}>
            <span className={styles.punct}>{closeMark}</span>
            {comma}
          </div>
        </>
      ) : null}
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === 'string') return <span className={styles.string}>{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span className={styles.number}>{String(value)}</span>;
  if (typeof value === 'boolean') return <span className={styles.boolean}>{String(value)}</span>;
  if (value === null) return <span className={styles.null}>null</span>;
  return <span className={styles.null}>undefined</span>;
}
