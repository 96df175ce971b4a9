/**
 * The engines of the database at a glance, in the top bar: a stack of the live engines' chips and how many
 * there are (a link to the Engines screen) — engines that run workflows only: a viewer tab or the studio
 * server's observer is not counted —, and a button that adds one: another engine tab in tab mode, one more
 * worker process in server mode when the server controls a fleet (none when it does not; both from
 * src/ui/components/AddEngine.tsx, which the screens use too).
 */
import { openEngineTab, StartWorkerButton } from '../components/AddEngine';
import { Button } from '../components/Button';
import { EngineChip } from '../components/EngineChip';
import { isEngineLive, useEngines } from '../data/engine-queries';
import { useStudioMode } from '../data/studio-mode';
import { Link } from '../routing/Link';
import { routes } from '../routing/route';
import styles from './EnginesOverview.module.css';

const maxChips = 5;

export function EnginesOverview() {
  const { data } = useEngines();
  const { server } = useStudioMode();
  const live = (data ?? []).filter((engine) => isEngineLive(engine) && engine.mode === 'engine');
  const shown = live.slice(0, maxChips);
  const noun = server ? 'worker' : 'engine';
  return (
    <Link
      to={routes.engines()}
      className={styles.overview}
      title={
        live
          .map(
            (engine) => `${engine.label}${engine.thisTab && !server ? ' (this tab)' : ''}: ${engine.status}`,
          )
          .join('\n') || `No live ${noun}s`
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
        {data ? `${live.length} ${noun}${live.length === 1 ? '' : 's'}` : `${noun}s…`}
      </span>
    </Link>
  );
}

/** Tab mode: opens another engine tab. Server mode: starts one more worker process (if the server can). */
export function OpenEngineTab() {
  const { server } = useStudioMode();
  if (server) return <StartWorkerButton size="md" variant="secondary" />;
  return (
    <Button
      icon="plus"
      size="md"
      variant="secondary"
      onClick={openEngineTab}
      testId="shell.open-tab"
      aria-label="Engine tab"
      title="Open the studio in another tab: one more engine competing for this database's workflows"
    >
      <span className={styles.openLabel}>Engine tab</span>
    </Button>
  );
}
