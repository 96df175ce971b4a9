/**
 * The command palette (⌘K / Ctrl-K): jump to a workflow by id prefix, to an engine or a screen, and run
 * actions — start a demo, switch the theme, connect to a studio server; in tab mode open another engine tab
 * and freeze, crash, shut down or restart this tab's engine; in server mode, on a fleet the server controls,
 * kill, freeze, thaw or stop each worker process and start one more. Arrow keys move, Enter runs, Escape
 * closes.
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useModalDialog } from '../components/Dialog';
import { EngineChip } from '../components/EngineChip';
import { Icon } from '../components/icons';
import { useChaos } from '../data/chaos';
import { isEngineLive, useClaims, useEngines, useThisEngine } from '../data/engine-queries';
import { useDefinitions, useWorkflowSearch } from '../data/workflow-queries';
import { routes } from '../routing/route';
import { navigate } from '../routing/router';
import { themeStore } from '../state/theme';
import { useViewStore } from '../state/view-store';
import { startBlankDraft } from '../screens/definitions/DefinitionsScreen';
import { startableDefinitions } from '../components/definition-catalog';
import { humanTitle, isOffered } from '../components/definition-names';
import styles from './CommandPalette.module.css';
import { openEngineTab } from '../components/AddEngine';
import { useConnectDialog } from './ConnectDialog';
import { processOf, fleetActionsFor, useFleet, useFleetAction, useStudioMode } from '../data/studio-mode';
import type { IconName } from '../components/icons';
import { groupBySection, matchCommands, type CommandSection, type PaletteCommand } from './palette-commands';

const sectionIcons: Record<CommandSection, IconName> = {
  Workflows: 'workflows',
  Screens: 'chevron-right',
  Engines: 'engines',
  Actions: 'bolt',
  'Start a demo': 'play',
};

/** Opens the palette on ⌘K / Ctrl-K, anywhere in the page. */
export function useCommandPaletteShortcut(): void {
  const openPalette = useViewStore((state) => state.openPalette);
  const closePalette = useViewStore((state) => state.closePalette);
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if ((event.metaKey || event.ctrlKey) && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        if (useViewStore.getState().paletteOpen) closePalette();
        else openPalette();
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [openPalette, closePalette]);
}

export function CommandPalette() {
  const open = useViewStore((state) => state.paletteOpen);
  const close = useViewStore((state) => state.closePalette);
  const ref = useModalDialog(open);
  return (
    <dialog
      ref={ref}
      className={styles.dialog}
      aria-label="Command palette"
      data-testid="palette.dialog"
      onCancel={(event) => {
        event.preventDefault();
        close();
      }}
      onMouseDown={(event) => {
        if (event.target === ref.current) close();
      }}
    >
      {open ? <PaletteBody onClose={close} /> : null}
    </dialog>
  );
}

function PaletteBody({ onClose }: { onClose: () => void }) {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const listRef = useRef<HTMLDivElement>(null);
  const commands = usePaletteCommands(query.trim());
  const matched = useMemo(() => matchCommands(commands, query), [commands, query]);
  const grouped = useMemo(() => groupBySection(matched), [matched]);
  const ordered = grouped.flatMap((group) => group.commands);
  const activeIndex = Math.min(active, Math.max(0, ordered.length - 1));

  useEffect(() => {
    listRef.current?.querySelector('[data-active="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [activeIndex]);

  const run = (command: PaletteCommand | undefined) => {
    if (!command) return;
    onClose();
    command.run();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      setActive((activeIndex + 1) % Math.max(1, ordered.length));
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((activeIndex - 1 + ordered.length) % Math.max(1, ordered.length));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      run(ordered[activeIndex]);
    }
  };
  let index = -1;
  return (
    <div className={styles.body}>
      <div className={styles.inputRow}>
        <Icon name="search" size={18} />
        <input
          className={styles.input}
          autoFocus
          value={query}
          onChange={(event) => {
            setQuery(event.target.value);
            setActive(0);
          }}
          onKeyDown={onKeyDown}
          placeholder="Type a workflow id, an engine, a screen or an action…"
          aria-label="Command"
          aria-controls="palette-list"
          aria-activedescendant={ordered[activeIndex] ? `palette-${ordered[activeIndex].id}` : undefined}
          role="combobox"
          aria-expanded="true"
          data-testid="palette.input"
        />
        <kbd className={styles.esc}>esc</kbd>
      </div>
      <div className={styles.list} id="palette-list" role="listbox" ref={listRef} aria-label="Commands">
        {grouped.length === 0 ? (
          <p className={styles.empty} data-testid="palette.empty">
            Nothing matches “{query}”. Workflow ids match from their first character.
          </p>
        ) : (
          grouped.map((group) => (
            <div key={group.section} role="group" aria-label={group.section}>
              <div className={styles.section}>{group.section}</div>
              {group.commands.map((command) => {
                index++;
                const isActive = index === activeIndex;
                const position = index;
                return (
                  <div
                    key={command.id}
                    id={`palette-${command.id}`}
                    role="option"
                    aria-selected={isActive}
                    data-active={isActive}
                    className={styles.item}
                    onMouseMove={() => setActive(position)}
                    onClick={() => run(command)}
                    data-testid="palette.item"
                    data-command-id={command.id}
                  >
                    {command.chip ? (
                      <EngineChip color={command.chip.color} shortLabel={command.chip.shortLabel} />
                    ) : (
                      <span className={styles.icon} aria-hidden>
                        <Icon name={command.icon ?? sectionIcons[command.section]} size={15} />
                      </span>
                    )}
                    <span className={`${styles.title} ${command.section === 'Workflows' ? styles.mono : ''}`}>
                      {command.title}
                    </span>
                    {command.subtitle ? <span className={styles.subtitle}>{command.subtitle}</span> : null}
                  </div>
                );
              })}
            </div>
          ))
        )}
      </div>
      <footer className={styles.footer}>
        <span>
          <kbd>↑</kbd>
          <kbd>↓</kbd> move
        </span>
        <span>
          <kbd>↵</kbd> run
        </span>
        <span>
          <kbd>esc</kbd> close
        </span>
      </footer>
    </div>
  );
}

function usePaletteCommands(query: string): PaletteCommand[] {
  const chaos = useChaos();
  const mode = useStudioMode();
  const fleet = useFleet().data;
  const fleetAction = useFleetAction();
  const showConnect = useConnectDialog((state) => state.show);
  const engines = useEngines().data ?? [];
  const claims = useClaims().data;
  const claimsOf = (engineId: string) =>
    claims
      ? claims.filter((claim) => claim.holder?.engineId === engineId).length
      : (engines.find((engine) => engine.engineId === engineId && isEngineLive(engine))?.claimsHeld ?? 0);
  const self = useThisEngine().data;
  const definitions = useDefinitions().data ?? [];
  const search = useWorkflowSearch(query, query.length > 0);
  const openStartDialog = useViewStore((state) => state.openStartDialog);
  const { choose, toggle } = themeStore.getState();
  const commands: PaletteCommand[] = [];
  for (const workflow of search.data?.items ?? [])
    commands.push({
      id: `wf:${workflow.workflowId}`,
      section: 'Workflows',
      title: workflow.workflowId,
      subtitle: `${workflow.workflowType} · ${workflow.status}`,
      run: () => navigate(routes.workflow(workflow.workflowId)),
    });
  commands.push(
    {
      id: 'screen:workflows',
      section: 'Screens',
      title: 'Workflows',
      subtitle: 'Every workflow, live',
      keywords: 'list go',
      run: () => navigate(routes.workflows()),
    },
    {
      id: 'screen:schedules',
      section: 'Screens',
      title: 'Schedules',
      subtitle: 'Workflows started on a cron, once per slot',
      keywords: 'cron schedule timer recurring go',
      run: () => navigate(routes.schedules()),
    },
    {
      id: 'screen:queues',
      section: 'Screens',
      title: 'Queues',
      subtitle: 'Workflows admitted under concurrency and rate limits',
      keywords: 'queue concurrency rate limit priority slots waiting go',
      run: () => navigate(routes.queues()),
    },
    {
      id: 'screen:engines',
      section: 'Screens',
      title: 'Engines',
      subtitle: mode.server ? 'One card per process: host, pid, liveness' : 'One card per tab’s engine',
      keywords: mode.server ? 'processes workers go' : 'tabs go',
      run: () => navigate(routes.engines()),
    },
    {
      id: 'screen:pending',
      section: 'Screens',
      title: 'Pending work',
      subtitle: 'Activities, timers, signals and children running workflows wait on',
      keywords: 'retries attempts timers due queue go',
      run: () => navigate(routes.pending()),
    },
    {
      id: 'screen:claims',
      section: 'Screens',
      title: 'Claims',
      subtitle: 'Who holds which workflow, at which epoch',
      keywords: 'epochs owners go',
      run: () => navigate(routes.claims()),
    },
    {
      id: 'screen:waiters',
      section: 'Screens',
      title: 'Result waiters',
      subtitle: 'result() calls waiting on workflows',
      keywords: 'waiting go',
      run: () => navigate(routes.waiters()),
    },
    {
      id: 'screen:definitions',
      section: 'Screens',
      title: 'Definitions',
      subtitle: mode.server
        ? 'Deployed with the workers; read-only here'
        : 'Write workflows in TypeScript; every tab runs them',
      keywords: 'editor code author source typescript go',
      run: () => navigate(routes.definitions()),
    },
    {
      id: 'screen:chaos',
      section: 'Screens',
      title: 'Chaos drills',
      subtitle: 'Break engines on purpose, check invariants',
      keywords: 'drills go',
      run: () => navigate(routes.chaos()),
    },
  );
  for (const engine of engines)
    commands.push({
      id: `engine:${engine.engineId}`,
      section: 'Engines',
      title: `${engine.label}${engine.thisTab ? (mode.server ? ' (this server)' : ' (this tab)') : ''}`,
      subtitle: `${engine.status} · ${claimsOf(engine.engineId)} claim${claimsOf(engine.engineId) === 1 ? '' : 's'} · ${engine.runtime?.kind === 'server' ? `${engine.runtime.hostName} pid ${engine.runtime.pid}` : engine.engineId.slice(0, 8)}`,
      keywords: `engine ${mode.server ? 'process worker' : 'tab'} ${engine.engineId}`,
      chip: { color: engine.color, shortLabel: engine.shortLabel },
      run: () => {
        useViewStore.setState({ selectedWorkflowId: null });
        navigate(routes.engines());
        requestAnimationFrame(() =>
          document.getElementById(`engine-${engine.engineId}`)?.scrollIntoView({ block: 'center' }),
        );
      },
    });
  commands.push(
    {
      id: 'action:start',
      section: 'Actions',
      title: 'Start a workflow…',
      subtitle: 'Pick a definition, edit its input',
      keywords: 'new run create',
      run: () => openStartDialog(),
    },
    {
      id: 'action:new-schedule',
      section: 'Actions',
      title: 'New schedule…',
      subtitle: 'Start a workflow on a cron',
      keywords: 'create cron recurring every',
      icon: 'schedules',
      run: () => openStartDialog(null, 'schedule'),
    },
    {
      id: 'action:new-definition',
      section: 'Actions',
      title: 'New definition…',
      subtitle: 'Write a workflow of your own in the editor',
      keywords: 'create author editor code workflow',
      run: () => startBlankDraft(definitions),
    },
    {
      id: 'action:connect',
      section: 'Actions',
      title: 'Connect to server…',
      subtitle: 'Open the studio of a shuttle serve URL',
      keywords: 'server url remote postgres fleet open',
      run: showConnect,
    },
    {
      id: 'action:theme-toggle',
      section: 'Actions',
      title: 'Toggle light / dark theme',
      keywords: 'theme dark light mode',
      run: toggle,
    },
    {
      id: 'action:theme-system',
      section: 'Actions',
      title: 'Use the system theme',
      keywords: 'theme auto',
      run: () => choose('system'),
    },
  );
  if (!mode.authoring) {
    const index = commands.findIndex((command) => command.id === 'action:new-definition');
    if (index >= 0) commands.splice(index, 1);
  }
  if (!mode.server)
    commands.push({
      id: 'action:open-tab',
      section: 'Actions',
      title: 'Open another engine tab',
      subtitle: 'One more engine competing for workflows',
      keywords: 'new tab window engine',
      run: openEngineTab,
    });
  if (mode.server && fleet?.controlled) {
    // The palette closes as the command runs: the promise reports, not a callback of the unmounted hook.
    const act = (request: Parameters<typeof fleetAction.mutateAsync>[0]) => () => {
      fleetAction
        .mutateAsync(request)
        .catch((error: unknown) => console.warn('[shuttle] fleet action failed', error));
    };
    commands.push({
      id: 'action:start-worker',
      section: 'Actions',
      title: 'Start one more worker',
      subtitle: 'A new shuttle worker process on this store',
      keywords: 'fleet process spawn new engine',
      run: act({ action: 'start' }),
    });
    for (const engine of engines) {
      const process = processOf(engine, fleet.processes);
      const can = fleetActionsFor(process);
      if (!process || engine.mode !== 'engine') continue;
      const where = `${engine.label} (pid ${process.pid})`;
      const keywords = `chaos fleet process worker ${engine.label}`;
      const chip = { color: engine.color, shortLabel: engine.shortLabel };
      if (can.kill)
        commands.push({
          id: `action:kill:${engine.engineId}`,
          section: 'Actions',
          title: `Kill ${where}`,
          subtitle: 'SIGKILL: other workers take over at once (its advisory lock goes with it)',
          keywords: `${keywords} crash sigkill`,
          chip,
          run: act({ action: 'kill', engineId: engine.engineId }),
        });
      if (can.freeze)
        commands.push({
          id: `action:freeze:${engine.engineId}`,
          section: 'Actions',
          title: `Freeze ${where} for 10 s`,
          subtitle: 'SIGSTOP, then SIGCONT: past the claim TTL, other workers take its workflows over',
          keywords: `${keywords} stall sigstop`,
          chip,
          run: act({ action: 'freeze', engineId: engine.engineId, seconds: 10 }),
        });
      if (can.thaw)
        commands.push({
          id: `action:thaw:${engine.engineId}`,
          section: 'Actions',
          title: `Thaw ${where}`,
          subtitle: 'SIGCONT now',
          keywords: `${keywords} sigcont resume`,
          chip,
          run: act({ action: 'thaw', engineId: engine.engineId }),
        });
      if (can.stop)
        commands.push({
          id: `action:stop:${engine.engineId}`,
          section: 'Actions',
          title: `Stop ${where} gracefully`,
          subtitle: 'SIGTERM: it releases every claim',
          keywords: `${keywords} shutdown sigterm release`,
          chip,
          run: act({ action: 'stop', engineId: engine.engineId }),
        });
    }
  }
  if (!mode.server && self && self.mode === 'engine') {
    const act = (type: 'freeze' | 'crash' | 'shutdown' | 'restart') => () => {
      const request =
        type === 'freeze'
          ? { type, engineId: self.engineId, seconds: 10 }
          : { type, engineId: self.engineId };
      // The palette closes as the command runs: the promise, not a callback of the unmounted hook, reports.
      chaos
        .mutateAsync(request)
        .catch((error: unknown) => console.warn('[shuttle] chaos action failed', error));
    };
    commands.push(
      {
        id: 'action:freeze-self',
        section: 'Actions',
        title: 'Freeze this engine for 10 s',
        subtitle: 'Past the claim TTL: other tabs take its workflows over',
        keywords: 'chaos stall',
        run: act('freeze'),
      },
      {
        id: 'action:crash-self',
        section: 'Actions',
        title: 'Crash this engine',
        subtitle: 'Terminate its worker; other tabs take over at once',
        keywords: 'chaos kill',
        run: act('crash'),
      },
      {
        id: 'action:shutdown-self',
        section: 'Actions',
        title: 'Shut this engine down gracefully',
        subtitle: 'Release every claim',
        keywords: 'chaos stop release',
        run: act('shutdown'),
      },
      {
        id: 'action:restart-self',
        section: 'Actions',
        title: 'Restart this engine',
        subtitle: 'A new engine id for this tab',
        keywords: 'chaos new',
        run: act('restart'),
      },
    );
  }
  for (const definition of startableDefinitions(definitions).filter(isOffered))
    commands.push({
      id: `demo:${definition.name}`,
      section: 'Start a demo',
      title: `Start ${humanTitle(definition)}`,
      subtitle: definition.name,
      keywords: `${definition.name} run demo`,
      run: () => openStartDialog(definition.name),
    });
  return commands;
}
