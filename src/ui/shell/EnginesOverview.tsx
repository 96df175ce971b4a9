/**
 * The engines of the database at a glance, in the top bar: a stack of the live engines' chips and how many
 * there are (a link to the Engines screen), and a button that opens another engine tab.
 */
import { Button } from '../components/Button';
import { EngineChip } from '../components/EngineChip';
import { isEngineLive, useEngines } from '../data/engine-queries';
import { Link } from '../routing/Link';
import { routes } from '../routing/route';
import styles from './EnginesOverview.module.css';

const maxChips = 5;

export function EnginesOverview() {
  const { data } = useEngines();
  const live = (data ?? []).filter(isEngineLive);
  const shown = live.slice(0, maxChips);
  return (
    <Link
      to={routes.engines()}
      className={styles.overview}
      title={
        live
          .map((engine) => `${engine.label}${engine.thisTab ? ' (this tab)' : ''}: ${engine.status}`)
          .join('\n') || 'No live engines'
      }
      testId="shell.engine-count"
    >
      <span className={styles.stack} aria-hidden>
        {shown.map((engine) => (
          <span key={engine.engineId} className={styles.chip}>
            <EngineChip color={engine.color} shortLabel={engine.shortLabel} />
          </span>
        ))}
        {live.length > maxChips ? <span className={styles.more}>+{live.length - maxChips}</span> : null}
      </span>
      <span
        className={styles.count}
        data-testid="shell.engine-count-value"
        data-count={data ? live.length : undefined}
      >
        {data ? `${live.length} ${live.length === 1 ? 'engine' : 'engines'}` : 'engines…'}
      </span>
    </Link>
  );
}

/** Opens the studio in a new tab: a new engine that competes for the same database's workflows. */
export function openEngineTab(): void {
  window.open(location.href, '_blank');
}

export function OpenEngineTab() {
  return (
    <Button
      icon="plus"
      size="md"
      variant="secondary"
      onClick={openEngineTab}
      testId="shell.open-tab"
      title="Open the studio in another tab: one more engine competing for this database's workflows"
    >
      Engine tab
    </Button>
  );
}
