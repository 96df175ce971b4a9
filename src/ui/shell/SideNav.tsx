/**
 * The screens of the studio, with a live figure beside each (schedules firing, workflows waiting in queues, definitions of one's own, live
 * engines, claims held by live engines, pending result waiters) so the sidebar itself says what is going on.
 */
import {
  claimsOfLiveEngines,
  isEngineLive,
  useEngines,
  useOwnedWorkflows,
  useThisEngine,
} from '../data/engine-queries';
import { useDefinitions } from '../data/workflow-queries';
import { useQueues } from '../data/queue-queries';
import { useSchedules } from '../data/schedule-queries';
import { Icon, type IconName } from '../components/icons';
import { Link } from '../routing/Link';
import { routes, sectionOf, type Route } from '../routing/route';
import styles from './SideNav.module.css';

type Item = { section: ReturnType<typeof sectionOf>; label: string; icon: IconName; to: Route };

const items: Item[] = [
  { section: 'workflows', label: 'Workflows', icon: 'workflows', to: routes.workflows() },
  { section: 'schedules', label: 'Schedules', icon: 'schedules', to: routes.schedules() },
  { section: 'queues', label: 'Queues', icon: 'queues', to: routes.queues() },
  { section: 'definitions', label: 'Definitions', icon: 'code', to: routes.definitions() },
  { section: 'pending', label: 'Pending work', icon: 'hourglass', to: routes.pending() },
  { section: 'engines', label: 'Engines', icon: 'engines', to: routes.engines() },
  { section: 'claims', label: 'Claims', icon: 'claims', to: routes.claims() },
  { section: 'waiters', label: 'Result waiters', icon: 'waiters', to: routes.waiters() },
  { section: 'chaos', label: 'Chaos drills', icon: 'chaos', to: routes.chaos() },
];

export function SideNav({ route }: { route: Route }) {
  const current = sectionOf(route);
  const engines = useEngines().data;
  const self = useThisEngine().data;
  const owned = useOwnedWorkflows().data;
  const definitions = useDefinitions().data;
  const schedules = useSchedules().data;
  const queues = useQueues().data;
  const figures: Partial<Record<Item['section'], number>> = {
    // Schedules that fire (not paused).
    schedules: schedules?.filter((schedule) => !schedule.paused).length,
    // Workflows waiting in a queue.
    queues: queues?.reduce((sum, queue) => sum + queue.waiting, 0),
    definitions: definitions
      ? new Set(definitions.filter((definition) => !definition.builtIn).map((definition) => definition.name))
          .size
      : undefined,
    // Engines that run workflows: a viewer tab or the studio server's observer is not one.
    engines: engines?.filter((engine) => isEngineLive(engine) && engine.mode === 'engine').length,
    // Claims held by live engines, from their presence records (one small record per engine) and this tab's
    // own held workflows: reading every claim here, in every tab, every few seconds, cost a request per
    // claim and held the holder's renewals back once tabs held thousands. The Claims screen reads the claims.
    claims: engines
      ? claimsOfLiveEngines(engines, self && owned ? { engineId: self.engineId, owned: owned.length } : null)
      : undefined,
    waiters: engines
      ?.filter(isEngineLive)
      .reduce(
        (sum, engine) => sum + (engine.resultWaiters ?? []).filter((waiter) => !waiter.settled).length,
        0,
      ),
  };
  return (
    <nav className={styles.nav} aria-label="Screens">
      {items.map((item) => {
        const figure = figures[item.section];
        return (
          <Link
            key={item.section}
            to={item.to}
            className={styles.item}
            aria-current={current === item.section ? 'page' : undefined}
            testId={`shell.nav-${item.section}`}
          >
            <Icon name={item.icon} />
            <span className={styles.label}>{item.label}</span>
            {figure !== undefined && figure > 0 ? <span className={styles.figure}>{figure}</span> : null}
          </Link>
        );
      })}
    </nav>
  );
}
