/**
 * The filters of the workflows list: id prefix search, text search (id, type, what it waits on, error), how
 * recently it started, status toggles, type and owner, whether to list every run of ids started again (run
 * history) or only the latest, and the tree view (children under their parents). Every change is
 * written to the URL (replacing the history entry), so a filtered list can be shared, reloaded, or opened
 * in another tab.
 */
import { useEffect, useState } from 'react';
import type { WorkflowStatus } from '../../../engine';
import { Icon } from '../../components/icons';
import { useEngines } from '../../data/engine-queries';
import { useDefinitions } from '../../data/workflow-queries';
import {
  defaultFilters,
  routes,
  timeRanges,
  type TimeRange,
  type WorkflowFilters,
} from '../../routing/route';
import { timeRangeLabels } from '../../data/list-filters';
import { navigate } from '../../routing/router';
import styles from './WorkflowFilterBar.module.css';
import { selfWord } from '../../data/studio-mode';
import { typeChoices } from './definition-catalog';

const statusOptions: { value: WorkflowStatus; label: string }[] = [
  { value: 'running', label: 'Running' },
  { value: 'pending', label: 'Pending' },
  { value: 'suspended', label: 'Suspended' },
  { value: 'completed', label: 'Completed' },
  { value: 'failed', label: 'Failed' },
  { value: 'cancelled', label: 'Cancelled' },
  { value: 'terminated', label: 'Terminated' },
  { value: 'timed-out', label: 'Timed out' },
];

function update(filters: WorkflowFilters, change: Partial<WorkflowFilters>): void {
  navigate(routes.workflows({ ...filters, ...change }), { replace: true });
}

export function WorkflowFilterBar({ filters }: { filters: WorkflowFilters }) {
  const definitions = useDefinitions().data ?? [];
  const engines = useEngines().data ?? [];
  const [search, setSearch] = useState(filters.idPrefix);
  // Follow the URL when it changes elsewhere (back button, palette); write it back as the person types.
  const [lastUrlPrefix, setLastUrlPrefix] = useState(filters.idPrefix);
  if (filters.idPrefix !== lastUrlPrefix) {
    setLastUrlPrefix(filters.idPrefix);
    setSearch(filters.idPrefix);
  }
  useEffect(() => {
    if (search === filters.idPrefix) return;
    const timer = setTimeout(() => update(filters, { idPrefix: search }), 200);
    return () => clearTimeout(timer);
  }, [search, filters]);
  // The text search, likewise.
  const [text, setText] = useState(filters.text);
  const [lastUrlText, setLastUrlText] = useState(filters.text);
  if (filters.text !== lastUrlText) {
    setLastUrlText(filters.text);
    setText(filters.text);
  }
  useEffect(() => {
    if (text === filters.text) return;
    const timer = setTimeout(() => update(filters, { text }), 200);
    return () => clearTimeout(timer);
  }, [text, filters]);
  const toggleStatus = (status: WorkflowStatus) => {
    const next = filters.status.includes(status)
      ? filters.status.filter((value) => value !== status)
      : [...filters.status, status];
    update(filters, { status: next });
  };
  const active =
    filters.status.length > 0 ||
    filters.type !== null ||
    filters.owner !== null ||
    filters.idPrefix !== '' ||
    filters.text !== '' ||
    filters.since !== null;
  const ownerKnown =
    filters.owner === null ||
    filters.owner === 'none' ||
    engines.some((engine) => engine.engineId === filters.owner);
  return (
    <div className={styles.bar} role="search" aria-label="Filter workflows">
      <div className={styles.row}>
        <label className={styles.search}>
          <Icon name="search" />
          <span className="visually-hidden">Workflow id starts with</span>
          <input
            value={search}
            onChange={(event) => setSearch(event.target.value)}
            placeholder="Search by id prefix"
            spellCheck={false}
            autoComplete="off"
            data-testid="workflows.search"
          />
        </label>
        <label className={`${styles.search} ${styles.textSearch}`}>
          <Icon name="search" />
          <span className="visually-hidden">Text in the id, type, what it waits on or its error</span>
          <input
            value={text}
            onChange={(event) => setText(event.target.value)}
            placeholder="Find text (id, type, error…)"
            spellCheck={false}
            autoComplete="off"
            data-testid="workflows.text-search"
          />
        </label>
        <label className={styles.select}>
          <span className={styles.selectLabel}>Started</span>
          <select
            value={filters.since ?? ''}
            onChange={(event) => update(filters, { since: (event.target.value || null) as TimeRange | null })}
            data-testid="workflows.filter-since"
          >
            <option value="">Any time</option>
            {timeRanges.map((range) => (
              <option key={range} value={range}>
                In the {timeRangeLabels[range]}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className={styles.row}>
        <label className={styles.select}>
          <span className={styles.selectLabel}>Type</span>
          <select
            value={filters.type ?? ''}
            onChange={(event) => update(filters, { type: event.target.value || null })}
            data-testid="workflows.filter-type"
          >
            <option value="">Any</option>
            {typeChoices(definitions).map((choice) => (
              <option key={choice.name} value={choice.name}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <label className={styles.select}>
          <span className={styles.selectLabel}>Owner</span>
          <select
            value={filters.owner ?? ''}
            onChange={(event) => update(filters, { owner: event.target.value || null })}
            data-testid="workflows.filter-owner"
          >
            <option value="">Anyone</option>
            <option value="none">Nobody (unowned)</option>
            {engines.map((engine) => (
              <option key={engine.engineId} value={engine.engineId}>
                {engine.label}
                {selfWord(engine) ? ` (${selfWord(engine)})` : ''}
                {engine.alive === false ? ' — gone' : ''}
              </option>
            ))}
            {!ownerKnown ? <option value={filters.owner!}>Engine {filters.owner!.slice(0, 8)}</option> : null}
          </select>
        </label>
        <label
          className={styles.toggle}
          title="Also list the earlier runs of ids that were started again after they finished (run history)"
        >
          <input
            type="checkbox"
            checked={filters.allRuns}
            onChange={(event) => update(filters, { allRuns: event.target.checked })}
            data-testid="workflows.all-runs"
          />
          Every run
        </label>
        <label
          className={styles.toggle}
          title="List children under their parents, indented (parent / child tree)"
        >
          <input
            type="checkbox"
            checked={filters.nest}
            onChange={(event) => update(filters, { nest: event.target.checked })}
            data-testid="workflows.tree-view"
          />
          Tree
        </label>
        {active ? (
          <button
            type="button"
            className={styles.clear}
            onClick={() => {
              setSearch('');
              setText('');
              navigate(
                routes.workflows({
                  sort: filters.sort,
                  direction: filters.direction,
                  allRuns: filters.allRuns,
                  nest: filters.nest,
                }),
                {
                  replace: true,
                },
              );
            }}
            data-testid="workflows.clear-filters"
          >
            <Icon name="close" size={14} /> Clear filters
          </button>
        ) : null}
      </div>
      <div className={styles.statuses} role="group" aria-label="Status">
        <button
          type="button"
          className={styles.status}
          aria-pressed={filters.status.length === 0}
          onClick={() => update(filters, { status: defaultFilters.status })}
        >
          All statuses
        </button>
        {statusOptions.map((option) => (
          <button
            key={option.value}
            type="button"
            className={styles.status}
            aria-pressed={filters.status.includes(option.value)}
            onClick={() => toggleStatus(option.value)}
            data-testid={`workflows.filter-status-${option.value}`}
          >
            <span className={`${styles.dot} ${styles[option.value.replace('-', '')] ?? ''}`} aria-hidden />
            {option.label}
          </button>
        ))}
      </div>
    </div>
  );
}
