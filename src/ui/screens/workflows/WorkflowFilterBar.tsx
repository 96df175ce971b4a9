/**
 * The filters of the workflows list: id prefix search, text search (id, type, what it waits on, error), how
 * recently it started, search attribute chips, status toggles, type and owner, whether to list every run of ids started again (run
 * history) or only the latest, and the tree view (children under their parents). Every change is
 * written to the URL (replacing the history entry), so a filtered list can be shared, reloaded, or opened
 * in another tab.
 */
import { useEffect, useState, type ReactNode } from 'react';
import type { WorkflowStatus } from '../../../public';
import { parseWhere } from '../../../public/browser';
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
import { typeChoices } from '../../components/definition-catalog';

/**
 * The status toggles, in the order shown, with their labels: typed by the one vocabulary (`WorkflowStatus`),
 * so a new status does not compile until it has a toggle here. `continued-as-new` is an earlier run's status
 * only (no workflow is listed with it), so it has none.
 */
const statusLabels: Record<Exclude<WorkflowStatus, 'continued-as-new'>, string> = {
  running: 'Running',
  pending: 'Pending',
  suspended: 'Suspended',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
  terminated: 'Terminated',
  'timed-out': 'Timed out',
};
const statusOptions = (Object.keys(statusLabels) as (keyof typeof statusLabels)[]).map((value) => ({
  value,
  label: statusLabels[value],
}));

function update(filters: WorkflowFilters, change: Partial<WorkflowFilters>): void {
  navigate(routes.workflows({ ...filters, ...change }), { replace: true });
}

/**
 * A typed filter (the id prefix, the text search): it follows the URL when that changes elsewhere (back
 * button, palette), and is written back to it once the person has stopped typing for 200 ms.
 */
function useTypedFilter(
  filters: WorkflowFilters,
  key: 'idPrefix' | 'text',
): [string, (value: string) => void] {
  const inUrl = filters[key];
  const [value, setValue] = useState(inUrl);
  const [lastInUrl, setLastInUrl] = useState(inUrl);
  if (inUrl !== lastInUrl) {
    setLastInUrl(inUrl);
    setValue(inUrl);
  }
  useEffect(() => {
    if (value === filters[key]) return;
    const timer = setTimeout(() => update(filters, { [key]: value }), 200);
    return () => clearTimeout(timer);
  }, [value, filters, key]);
  return [value, setValue];
}

/** A search field of the bar: an icon, a label for screen readers, and the input. */
function SearchField({
  label,
  value,
  onValue,
  placeholder,
  className,
  testId,
}: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  placeholder: string;
  className?: string;
  testId: string;
}) {
  return (
    <label className={className ? `${styles.search} ${className}` : styles.search}>
      <Icon name="search" />
      <span className="visually-hidden">{label}</span>
      <input
        value={value}
        onChange={(event) => onValue(event.target.value)}
        placeholder={placeholder}
        spellCheck={false}
        autoComplete="off"
        data-testid={testId}
      />
    </label>
  );
}

/** A labelled select of the bar. */
function FilterSelect({
  label,
  value,
  onValue,
  testId,
  children,
}: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  testId: string;
  children: ReactNode;
}) {
  return (
    <label className={styles.select}>
      <span className={styles.selectLabel}>{label}</span>
      <select value={value} onChange={(event) => onValue(event.target.value)} data-testid={testId}>
        {children}
      </select>
    </label>
  );
}

/** A checkbox of the bar: a view option kept in the URL. */
function FilterToggle({
  filters,
  filter,
  label,
  title,
  testId,
}: {
  filters: WorkflowFilters;
  filter: 'allRuns' | 'nest';
  label: string;
  title: string;
  testId: string;
}) {
  return (
    <label className={styles.toggle} title={title}>
      <input
        type="checkbox"
        checked={filters[filter]}
        onChange={(event) => update(filters, { [filter]: event.target.checked })}
        data-testid={testId}
      />
      {label}
    </label>
  );
}

/**
 * Search attribute filters as chips: type `customer = acme` or `amount >= 100` and press Enter to add one
 * (checked for shape at once: the list checks the value against the attribute's type); × removes it. The
 * chips are `where` conditions of the list (all must hold), kept in the URL.
 */
function AttributeChips({ filters }: { filters: WorkflowFilters }) {
  const [draft, setDraft] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const add = () => {
    const text = draft.trim();
    if (text === '') return;
    try {
      // Written back in one spelling (`name>=value`), so the same condition is one chip.
      const { name, op, value } = parseWhere(text);
      const symbol = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
      const raw = String(value);
      const condition = `${name}${symbol}${raw === '' || raw !== raw.trim() ? `"${raw}"` : raw}`;
      setProblem(null);
      setDraft('');
      if (!filters.where.includes(condition)) update(filters, { where: [...filters.where, condition] });
    } catch (error) {
      setProblem((error as Error).message);
    }
  };
  return (
    <div className={styles.attributes} role="group" aria-label="Search attributes">
      <label className={styles.search}>
        <Icon name="search" />
        <span className="visually-hidden">Search attribute condition, like customer = acme</span>
        <input
          value={draft}
          onChange={(event) => {
            setDraft(event.target.value);
            setProblem(null);
          }}
          onKeyDown={(event) => {
            if (event.key === 'Enter') {
              event.preventDefault();
              add();
            }
          }}
          placeholder="Attribute: customer = acme, amount >= 100 (Enter)"
          spellCheck={false}
          autoComplete="off"
          aria-invalid={problem !== null || undefined}
          data-testid="workflows.attribute-input"
        />
      </label>
      {filters.where.map((condition) => (
        <span
          key={condition}
          className={styles.chip}
          data-testid="workflows.attribute-chip"
          data-condition={condition}
        >
          <span className={styles.chipText}>{condition}</span>
          <button
            type="button"
            className={styles.chipRemove}
            aria-label={`Remove the filter ${condition}`}
            title="Remove this filter"
            onClick={() => update(filters, { where: filters.where.filter((other) => other !== condition) })}
            data-testid="workflows.attribute-chip-remove"
          >
            <Icon name="close" size={12} />
          </button>
        </span>
      ))}
      {problem ? (
        <span className={styles.attributeProblem} role="alert" data-testid="workflows.attribute-problem">
          {problem}
        </span>
      ) : null}
    </div>
  );
}

export function WorkflowFilterBar({ filters }: { filters: WorkflowFilters }) {
  const definitions = useDefinitions().data ?? [];
  const engines = useEngines().data ?? [];
  const [search, setSearch] = useTypedFilter(filters, 'idPrefix');
  const [text, setText] = useTypedFilter(filters, 'text');
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
    filters.since !== null ||
    filters.where.length > 0;
  const ownerKnown =
    filters.owner === null ||
    filters.owner === 'none' ||
    engines.some((engine) => engine.engineId === filters.owner);
  return (
    <div className={styles.bar} role="search" aria-label="Filter workflows">
      <div className={styles.row}>
        <SearchField
          label="Workflow id starts with"
          value={search}
          onValue={setSearch}
          placeholder="Search by id prefix"
          testId="workflows.search"
        />
        <SearchField
          label="Text in the id, type, what it waits on or its error"
          value={text}
          onValue={setText}
          placeholder="Find text (id, type, error…)"
          className={styles.textSearch}
          testId="workflows.text-search"
        />
        <FilterSelect
          label="Started"
          value={filters.since ?? ''}
          onValue={(value) => update(filters, { since: (value || null) as TimeRange | null })}
          testId="workflows.filter-since"
        >
          <option value="">Any time</option>
          {timeRanges.map((range) => (
            <option key={range} value={range}>
              In the {timeRangeLabels[range]}
            </option>
          ))}
        </FilterSelect>
      </div>
      <div className={styles.row}>
        <FilterSelect
          label="Type"
          value={filters.type ?? ''}
          onValue={(value) => update(filters, { type: value || null })}
          testId="workflows.filter-type"
        >
          <option value="">Any</option>
          {typeChoices(definitions).map((choice) => (
            <option key={choice.name} value={choice.name}>
              {choice.label}
            </option>
          ))}
        </FilterSelect>
        <FilterSelect
          label="Owner"
          value={filters.owner ?? ''}
          onValue={(value) => update(filters, { owner: value || null })}
          testId="workflows.filter-owner"
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
        </FilterSelect>
        <FilterToggle
          filters={filters}
          filter="allRuns"
          label="Every run"
          title="Also list the earlier runs of ids that were started again after they finished (run history)"
          testId="workflows.all-runs"
        />
        <FilterToggle
          filters={filters}
          filter="nest"
          label="Tree"
          title="List children under their parents, indented (parent / child tree)"
          testId="workflows.tree-view"
        />
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
      <AttributeChips filters={filters} />
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
