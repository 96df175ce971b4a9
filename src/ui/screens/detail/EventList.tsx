/**
 * The workflow's timeline as a list, grouped by operation: an activity's attempts, failures and retries
 * under one header, a signal's receipt with its consumption, ownership changes standing out. Virtualised,
 * so a 10,000-entry timeline scrolls smoothly; filterable by category. Selecting a group highlights its
 * marks on the chart, and selecting a mark on the chart scrolls its group into view here.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { TimelineEntry } from '../../../public';
import type { EngineRecord } from '../../../public/browser';
import { EmptyState } from '../../components/EmptyState';
import { EngineChip } from '../../components/EngineChip';
import { Icon } from '../../components/icons';
import { formatAbsolute, formatClock } from '../../components/time-format';
import { EventDetailDialog } from './EventDetailDialog';
import styles from './EventList.module.css';
import { describeEntry, type EventGroup } from './operations';

type Category = EventGroup['category'] | 'all';

type Row =
  | { type: 'header'; group: EventGroup; collapsed: boolean }
  | { type: 'entry'; entry: TimelineEntry; group: EventGroup; nested: boolean };

const categories: { value: Category; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'operation', label: 'Operations' },
  { value: 'ownership', label: 'Ownership' },
  { value: 'message', label: 'Messages' },
  { value: 'lifecycle', label: 'Lifecycle' },
];

export type EventListProps = {
  /** The workflow and the run the timeline is of (the event detail reads its operations' values). */
  workflowId: string;
  run: number;
  groups: readonly EventGroup[];
  /** The whole timeline, for the event detail (the other entries of an operation). */
  timeline: readonly TimelineEntry[];
  engines: ReadonlyMap<string, EngineRecord>;
  selectedGroupKey: string | null;
  onSelectGroup: (groupKey: string | null) => void;
  totalEntries: number;
};

export function EventList({
  workflowId,
  run,
  groups,
  timeline,
  engines,
  selectedGroupKey,
  onSelectGroup,
  totalEntries,
}: EventListProps) {
  const [category, setCategory] = useState<Category>('all');
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [openSeq, setOpenSeq] = useState<number | null>(null);
  const openEntry = openSeq === null ? null : (timeline.find((entry) => entry.seq === openSeq) ?? null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const rows = useMemo(() => {
    const list: Row[] = [];
    for (const group of groups) {
      if (category !== 'all' && group.category !== category) continue;
      if (group.entries.length === 1) {
        list.push({ type: 'entry', entry: group.entries[0]!, group, nested: false });
        continue;
      }
      const isCollapsed = collapsed.has(group.key);
      list.push({ type: 'header', group, collapsed: isCollapsed });
      if (!isCollapsed)
        for (const entry of group.entries) list.push({ type: 'entry', entry, group, nested: true });
    }
    return list;
  }, [groups, category, collapsed]);
  // TanStack Virtual re-renders the list on scroll by design; the compiler's memoisation is not needed here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => (rows[index]?.type === 'header' ? 38 : 32),
    overscan: 16,
  });
  const name = (engineId: string) => engines.get(engineId)?.label ?? engineId.slice(0, 8);

  // Bring the group selected on the chart into view.
  useEffect(() => {
    if (!selectedGroupKey) return;
    const index = rows.findIndex((row) => row.group.key === selectedGroupKey);
    if (index >= 0) virtualizer.scrollToIndex(index, { align: 'start' });
  }, [selectedGroupKey, rows, virtualizer]);

  return (
    <div className={styles.panel}>
      <div className={styles.head}>
        <div className={styles.categories} role="group" aria-label="Show">
          {categories.map((option) => (
            <button
              key={option.value}
              type="button"
              aria-pressed={category === option.value}
              className={styles.category}
              onClick={() => setCategory(option.value)}
            >
              {option.label}
            </button>
          ))}
        </div>
        <span className={styles.count} data-testid="detail.event-count">
          {totalEntries.toLocaleString()} {totalEntries === 1 ? 'entry' : 'entries'}
        </span>
      </div>
      <div
        ref={scrollRef}
        className={styles.scroll}
        role="list"
        aria-label="Timeline events"
        data-testid="detail.events"
      >
        {rows.length === 0 ? (
          <EmptyState
            compact
            title={totalEntries === 0 ? 'No timeline entries yet' : 'Nothing in this category'}
          />
        ) : (
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((virtual) => {
              const row = rows[virtual.index]!;
              const selected = row.group.key === selectedGroupKey;
              const style = { transform: `translateY(${virtual.start}px)`, height: virtual.size };
              if (row.type === 'header')
                return (
                  <div
                    key={`h-${row.group.key}`}
                    role="listitem"
                    className={`${styles.row} ${styles.header} ${selected ? styles.selected : ''}`}
                    style={style}
                    data-testid="detail.event-group"
                    data-group={row.group.key}
                    data-selected={selected || undefined}
                  >
                    <button
                      type="button"
                      className={styles.caret}
                      aria-expanded={!row.collapsed}
                      aria-label={`${row.collapsed ? 'Expand' : 'Collapse'} ${row.group.title}`}
                      onClick={() => {
                        const next = new Set(collapsed);
                        if (next.has(row.group.key)) next.delete(row.group.key);
                        else next.add(row.group.key);
                        setCollapsed(next);
                      }}
                    >
                      <Icon name={row.collapsed ? 'chevron-right' : 'chevron-down'} size={14} />
                    </button>
                    <button
                      type="button"
                      className={styles.select}
                      onClick={() => onSelectGroup(selected ? null : row.group.key)}
                      aria-pressed={selected}
                    >
                      <span className={`${styles.toneDot} ${styles[`tone-${row.group.tone}`]}`} aria-hidden />
                      <span className={styles.title}>{row.group.title}</span>
                      <span className={styles.summary}>{row.group.summary}</span>
                      <time className={styles.time} title={formatAbsolute(row.group.start)}>
                        {formatClock(row.group.start)}
                      </time>
                    </button>
                  </div>
                );
              const entry = row.entry;
              return (
                <div
                  key={`e-${entry.seq}`}
                  role="listitem"
                  className={`${styles.row} ${styles.entry} ${row.nested ? styles.nested : ''} ${selected ? styles.selected : ''} ${row.group.category === 'ownership' ? styles.ownership : ''}`}
                  style={style}
                  data-testid="detail.event"
                  data-kind={entry.kind}
                  data-seq={entry.seq}
                  data-selected={selected || undefined}
                >
                  <button
                    type="button"
                    className={styles.select}
                    onClick={() => onSelectGroup(selected ? null : row.group.key)}
                    aria-pressed={selected}
                  >
                    {!row.nested ? (
                      <span className={`${styles.toneDot} ${styles[`tone-${row.group.tone}`]}`} aria-hidden />
                    ) : null}
                    <span className={styles.kind}>{entry.kind}</span>
                    <span className={styles.description} title={describeEntry(entry, name)}>
                      {describeEntry(entry, name)}
                    </span>
                    <EngineBadge
                      engineId={entry.engineId}
                      engine={engines.get(entry.engineId)}
                      epoch={entry.epoch}
                    />
                    <time className={styles.time} title={formatAbsolute(entry.at)}>
                      {formatClock(entry.at)}
                    </time>
                  </button>
                  <button
                    type="button"
                    className={styles.open}
                    onClick={() => setOpenSeq(entry.seq)}
                    aria-label={`Details of event #${entry.seq} (${entry.kind})`}
                    title="Everything this event recorded"
                    data-testid="detail.event-open"
                  >
                    <Icon name="chevron-right" size={14} />
                  </button>
                </div>
              );
            })}
          </div>
        )}
      </div>
      <EventDetailDialog
        workflowId={workflowId}
        run={run}
        entry={openEntry}
        timeline={timeline}
        engines={engines}
        onClose={() => setOpenSeq(null)}
        onOpen={setOpenSeq}
      />
    </div>
  );
}

function EngineBadge({
  engineId,
  engine,
  epoch,
}: {
  engineId: string;
  engine: EngineRecord | undefined;
  epoch: number;
}) {
  return (
    <span className={styles.writer} title={`Written by ${engine?.label ?? engineId} under epoch ${epoch}`}>
      <EngineChip color={engine?.color ?? '#8a93a1'} shortLabel={engine?.shortLabel ?? '?'} />
      <span className={styles.epoch}>e{epoch}</span>
    </span>
  );
}
