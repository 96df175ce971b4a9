/**
 * Runs one seed of the browser soak in one browser context (a fresh database): opens the schedule's first
 * tabs, saves the `soak-order` definition from one of them (every tab registers it), starts the first
 * workflows, plays the schedule's events at their planned times — opening, closing, crashing (CDP
 * `Page.crash`), reloading and freezing tabs (the studio's chaos freeze, asked from another tab; the Page
 * Lifecycle freeze and resume), starting workflows and sending signals and updates from random tabs — then
 * lets every workflow finish and checks the durable record (verify.ts) against the ledger (ledger.ts).
 *
 * Waiting: every wait is on a condition, with a budget derived from the studio's claim timings
 * (`hostClaimTimings`) or the client's own request timeout; the only fixed waits are the schedule's
 * planned event times and the end of a chaos freeze the engine itself announced (`frozenUntil`).
 *
 * What counts as a violation besides verify.ts: an event the schedule could not apply (a live tab that could
 * not signal, start, freeze another, reload or open within its budget), a workflow that did not end within
 * the budget, an update that could not be delivered at the end, and an error that escaped uncaught to a page.
 */
import { expect, type BrowserContext, type CDPSession, type Page } from '@playwright/test';
import type { FenceRejection, StartOptions, TimelineEntry, WorkflowDescription } from '../../src/engine';
import { isTerminal, terminalStatuses } from '../../src/engine/vocabulary';
import { hostClaimTimings } from '../../src/protocol';
import { ConsoleApi, crashTab } from '../fixtures/console';
import { throttlePage } from '../fixtures/load';
import { Ledger } from './ledger';
import { lifecycleFreeze, lifecycleResume, type FrozenBy } from './lifecycle';
import { describeEvent, soakSchedule, type ProfileName, type SoakEvent, type SoakSchedule } from './schedule';
import { verifySeed, type SeedEvidence, type SeedFigures, type WorkflowRecord } from './verify';
import { soakWorkflowSource, soakWorkflowType, type SoakInput } from './workflow';
import '../../src/ui/app/console-api';

const { ttlMs, renewIntervalMs, graceMs } = hostClaimTimings;

/**
 * The longest a workflow may wait for a new owner once its owner is gone or frozen: the claim lapses
 * (TTL + grace), and an engine that lost it may still be in its cooldown (at most 4 × TTL).
 */
export const takeoverBudgetMs = ttlMs + graceMs + 4 * ttlMs;
/** How long every workflow may take to end once the faults are over: three takeovers and the work. */
export const finishBudgetMs = 30_000 + 3 * takeoverBudgetMs;
/** A tab's engine must start within the client's own request timeout (`requestTimeoutMs`, 30 s). */
export const tabStartBudgetMs = 30_000;
/**
 * How long a chaos freeze waits for its target to be running an activity of a workflow it owns (so the freeze
 * catches one in flight, as the cluster suite's SIGSTOP does) before it freezes the target anyway.
 */
export const inFlightWaitMs = 3 * renewIntervalMs;

type TabState = 'live' | 'chaos-frozen' | 'lifecycle-frozen' | 'gone';

type SoakTab = {
  slot: number;
  page: Page;
  api: ConsoleApi;
  errors: string[];
  /** The page's console errors and warnings (diagnostics for a failing seed's report, not checked). */
  console: string[];
  state: TabState;
  /** End of the current chaos freeze (the engine's own `frozenUntil`). */
  frozenUntil: number;
  lifecycle: { session: CDPSession; how: FrozenBy } | null;
};

type UpdateCall = {
  workflow: number;
  value: string;
  outcome: 'pending' | 'applied' | 'failed';
  error?: string;
};

export type SeedReport = {
  seed: number;
  profile: ProfileName;
  violations: string[];
  figures: SeedFigures & {
    durationMs: number;
    /** From the first event to the last one done. */
    scheduleMs: number;
    /** From the last event until every workflow ended. */
    drainMs: number;
    tabsOpened: number;
    faults: Record<string, number>;
    /** Chaos freezes that caught their tab running an activity. */
    freezesInFlight: number;
    updatesResent: number;
  };
  /** The schedule as planned, one line per event. */
  plan: string[];
  /** What happened, one line per event, with real times. */
  log: string[];
  /** The evidence the checks read (for a failing seed's report). */
  evidence: SeedEvidence;
};

const sleepUntil = (at: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

function message(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error);
}

function studioUrl(databaseName: string): string {
  return `/?${new URLSearchParams({ db: databaseName }).toString()}`;
}

async function expectEngineRunning(page: Page): Promise<void> {
  await expect(page.getByTestId('shell.engine-status')).toHaveText('running', { timeout: tabStartBudgetMs });
}

/** Runs seed `seed` of `profile` in `context`, on the database `databaseName`; never throws for a violation. */
export async function runSeed(
  context: BrowserContext,
  options: { seed: number; profile: ProfileName; databaseName: string; output?: (line: string) => void },
): Promise<SeedReport> {
  const began = Date.now();
  const schedule: SoakSchedule = soakSchedule(options.seed, options.profile);
  const log: string[] = [];
  const say = (line: string) => {
    const text = `[seed ${options.seed} +${((Date.now() - began) / 1000).toFixed(1)}s] ${line}`;
    log.push(text);
    options.output?.(text);
  };
  const violations: string[] = [];
  const tabs: SoakTab[] = [];
  const faults: Record<string, number> = {};
  const updates: UpdateCall[] = [];
  let freezesInFlight = 0;
  const ledger = await Ledger.start();
  say(
    `${schedule.profile} schedule: ${schedule.workflows.length} workflows, ${schedule.initialTabs} tabs, ${schedule.faults} faults, ${schedule.events.length} events; ledger ${ledger.url}`,
  );

  const inputOf = (n: number): SoakInput => ({ ...schedule.workflows[n]!.input, ledger: ledger.url });

  const openTab = async (slot: number): Promise<SoakTab> => {
    const page = await context.newPage();
    const tab: SoakTab = {
      slot,
      page,
      api: new ConsoleApi(page),
      errors: [],
      console: [],
      state: 'live',
      frozenUntil: 0,
      lifecycle: null,
    };
    tabs[slot] = tab;
    await throttlePage(page); // SHUTTLE_E2E_CPU_THROTTLE (e2e/fixtures/load.ts)
    page.on('pageerror', (error) => tab.errors.push(`${error.name}: ${error.message}`));
    page.on('console', (entry) => {
      if (entry.type() === 'error' || entry.type() === 'warning')
        tab.console.push(
          `+${((Date.now() - began) / 1000).toFixed(1)}s ${entry.type()}: ${entry.text().slice(0, 300)}`,
        );
    });
    page.on('response', (response) => {
      if (response.status() >= 400)
        tab.console.push(
          `+${((Date.now() - began) / 1000).toFixed(1)}s HTTP ${response.status()} ${response.url()}`,
        );
    });
    await page.goto(studioUrl(options.databaseName));
    await expectEngineRunning(page);
    return tab;
  };

  /** The tab, once it can call: a chaos freeze that outlasted the plan is waited out. */
  const callable = async (slot: number): Promise<SoakTab> => {
    const tab = tabs[slot];
    if (!tab) throw new Error(`tab ${slot} was never opened`);
    if (tab.state === 'chaos-frozen') {
      await sleepUntil(tab.frozenUntil);
      tab.state = 'live';
    }
    if (tab.state !== 'live') throw new Error(`tab ${slot} is ${tab.state}, not live`);
    return tab;
  };

  const start = (tab: SoakTab, n: number) => {
    const plan = schedule.workflows[n]!;
    const startOptions: StartOptions = { id: plan.id };
    return tab.page.evaluate(
      ({ type, input, startOptions }) => window.shuttle!.start(type, input, startOptions),
      { type: soakWorkflowType, input: inputOf(n), startOptions },
    );
  };

  const sendUpdate = (tab: SoakTab, workflowId: string, value: string, timeoutMs: number) =>
    tab.page.evaluate(
      ({ workflowId, value, timeoutMs }) =>
        window.shuttle!.update<number>(workflowId, 'add', value, { timeoutMs }),
      { workflowId, value, timeoutMs },
    );

  /** Waits (at most `inFlightWaitMs`) until `tab`'s engine runs an activity of a workflow it owns. */
  const activityInFlight = async (tab: SoakTab): Promise<boolean> => {
    const deadline = Date.now() + inFlightWaitMs;
    do {
      const running = await tab.page.evaluate(async () => {
        for (const id of await window.shuttle!.ownedWorkflows()) {
          const { pending } = await window.shuttle!.describe(id);
          if (pending?.leaves.some((leaf) => leaf.kind === 'activity' && !leaf.done && !leaf.retrying))
            return true;
        }
        return false;
      });
      if (running) return true;
      await new Promise((resolve) => setTimeout(resolve, 50)); // the poll's interval
    } while (Date.now() < deadline);
    return false;
  };

  const apply = async (event: SoakEvent): Promise<string | void> => {
    switch (event.kind) {
      case 'start': {
        await start(await callable(event.from), event.workflow);
        return;
      }
      case 'signal': {
        const tab = await callable(event.from);
        const workflowId = schedule.workflows[event.workflow]!.id;
        await tab.page.evaluate(
          ({ workflowId, value }) => window.shuttle!.signal(workflowId, 'item', { value }),
          { workflowId, value: event.value },
        );
        return;
      }
      case 'update': {
        // Not awaited: the call waits for the owner to apply it, and faults go on meanwhile. An update whose
        // call did not come back applied is sent again at the end (the handler adds a value once).
        const tab = await callable(event.from);
        const call: UpdateCall = { workflow: event.workflow, value: event.value, outcome: 'pending' };
        updates.push(call);
        sendUpdate(tab, schedule.workflows[event.workflow]!.id, event.value, finishBudgetMs).then(
          () => (call.outcome = 'applied'),
          (error: unknown) => {
            call.outcome = 'failed';
            call.error = message(error);
          },
        );
        return;
      }
      case 'open':
        await openTab(event.tab);
        return;
      case 'close': {
        const tab = tabs[event.tab]!;
        tab.state = 'gone';
        await tab.page.close();
        return;
      }
      case 'crash': {
        const tab = tabs[event.tab]!;
        tab.state = 'gone';
        await crashTab(context, tab.page);
        await tab.page.close();
        return;
      }
      case 'reload': {
        const tab = tabs[event.tab]!;
        await tab.page.reload();
        tab.state = 'live';
        tab.frozenUntil = 0;
        await expectEngineRunning(tab.page);
        return;
      }
      case 'chaos-freeze': {
        const target = await callable(event.tab);
        const from = await callable(event.from);
        const engineId = await target.api.engineId();
        const inFlight = await activityInFlight(target);
        const { frozenUntil } = await from.api.chaos.freeze(engineId, event.seconds);
        target.state = 'chaos-frozen';
        target.frozenUntil = frozenUntil;
        if (inFlight) freezesInFlight++;
        return inFlight ? 'with an activity in flight' : 'idle';
      }
      case 'lifecycle-freeze': {
        const tab = await callable(event.tab);
        const session = await context.newCDPSession(tab.page);
        tab.state = 'lifecycle-frozen';
        tab.lifecycle = { session, how: await lifecycleFreeze(session, tab.page) };
        return;
      }
      case 'lifecycle-resume': {
        const tab = tabs[event.tab]!;
        if (tab.state !== 'lifecycle-frozen' || !tab.lifecycle)
          throw new Error(`tab ${event.tab} is not frozen`);
        const before = await tab.page.getByTestId('shell.engine-id').getAttribute('data-full-id');
        await lifecycleResume(tab.lifecycle.session, tab.page, tab.lifecycle.how);
        await tab.lifecycle.session.detach().catch(() => undefined);
        tab.lifecycle = null;
        // It rejoins with a fresh engine.
        await expect(tab.page.getByTestId('shell.engine-id')).not.toHaveAttribute(
          'data-full-id',
          before ?? '',
          {
            timeout: tabStartBudgetMs,
          },
        );
        await expectEngineRunning(tab.page);
        tab.state = 'live';
        return;
      }
    }
  };

  /**
   * An update whose call did not come back applied (its tab closed, crashed, reloaded or froze meanwhile)
   * may or may not have been stored. Unless the workflow already ended or its state has the value, it is
   * sent again: a value is added once, so a copy of one that was stored after all changes nothing.
   */
  const redeliverUpdates = async (observer: SoakTab): Promise<number> => {
    let resent = 0;
    for (const call of updates.filter((update) => update.outcome !== 'applied')) {
      const workflowId = schedule.workflows[call.workflow]!.id;
      const delivered = async () => {
        const description = await observer.api.describe(workflowId);
        const added = (description.state.added as string[] | undefined) ?? [];
        return isTerminal(description.status) || added.includes(call.value);
      };
      if (await delivered()) continue;
      resent++;
      try {
        await sendUpdate(observer, workflowId, call.value, finishBudgetMs);
      } catch (error) {
        // Refused because the workflow has ended since (it had the value, stored by the first call): fine.
        if (!(await delivered()))
          violations.push(
            `update ${call.value} of ${workflowId} could not be delivered at the end: ${message(error)} (its first call: ${call.outcome}${call.error ? `, ${call.error}` : ''})`,
          );
      }
    }
    return resent;
  };

  /** Every workflow ends, and every engine learns it holds nothing any more. */
  const awaitTheEnd = async (observer: SoakTab, live: readonly SoakTab[]): Promise<void> => {
    const ids = schedule.workflows.map((plan) => plan.id);
    const outcomes = await observer.page.evaluate(
      async ({ ids, statuses, timeoutMs }) =>
        Promise.all(
          ids.map((id) =>
            window.shuttle!.waitFor(id, statuses, { timeoutMs }).then(
              () => null,
              (error: Error) => `${error.name}: ${error.message}`,
            ),
          ),
        ),
      { ids, statuses: [...terminalStatuses], timeoutMs: finishBudgetMs },
    );
    outcomes.forEach((outcome, index) => {
      if (outcome) violations.push(`${ids[index]}: did not end within ${finishBudgetMs} ms: ${outcome}`);
    });
    // A thawed zombie finds its claims taken over at its next renewal (its late write is refused before).
    for (const tab of live)
      try {
        await expect
          .poll(() => tab.page.evaluate(() => window.shuttle!.ownedWorkflows()), {
            timeout: takeoverBudgetMs,
          })
          .toEqual([]);
      } catch (error) {
        violations.push(`tab ${tab.slot} still believes it owns workflows: ${message(error)}`);
      }
  };

  let scheduleStarted = Date.now();
  let scheduleEnded = scheduleStarted;
  try {
    // The first tabs, the definition (registered by every tab), the first workflows.
    for (let slot = 0; slot < schedule.initialTabs; slot++) await openTab(slot);
    const saved = await tabs[0]!.page.evaluate(
      (source) => window.shuttle!.saveDefinition(source),
      soakWorkflowSource,
    );
    if (!saved.ok) throw new Error(`the soak definition was not saved: ${JSON.stringify(saved)}`);
    for (const tab of tabs)
      await expect
        .poll(
          async () =>
            (await tab.page.evaluate(() => window.shuttle!.definitions())).some(
              (definition) => definition.name === soakWorkflowType && definition.registered,
            ),
          { timeout: tabStartBudgetMs },
        )
        .toBe(true);
    for (const plan of schedule.workflows)
      if (plan.initialFrom !== null) await start(tabs[plan.initialFrom]!, plan.n);
    say(
      `${tabs.length} tabs open, ${schedule.workflows.filter((plan) => plan.initialFrom !== null).length} workflows started`,
    );

    // The schedule.
    scheduleStarted = Date.now();
    for (const event of schedule.events) {
      await sleepUntil(scheduleStarted + event.at);
      const applying = Date.now();
      try {
        const how = await apply(event);
        if (!['start', 'signal', 'update', 'lifecycle-resume'].includes(event.kind))
          faults[event.kind] = (faults[event.kind] ?? 0) + 1;
        say(`${describeEvent(event)} — done${how ? ` (${how})` : ''} in ${Date.now() - applying} ms`);
      } catch (error) {
        violations.push(`schedule: ${describeEvent(event)} could not be applied: ${message(error)}`);
        say(`${describeEvent(event)} — FAILED: ${message(error)}`);
        const involved = 'tab' in event ? event.tab : event.from;
        for (const line of tabs[involved]?.console.slice(-8) ?? []) say(`  tab ${involved} console ${line}`);
      }
    }
    scheduleEnded = Date.now();
  } catch (error) {
    violations.push(`setup: ${message(error)}`);
    say(`setup FAILED: ${message(error)}`);
  }

  // Heal: every chaos freeze ends (the lifecycle freezes were resumed by the schedule).
  const open = () => tabs.filter((tab) => tab.state !== 'gone');
  await sleepUntil(Math.max(0, ...open().map((tab) => tab.frozenUntil)));
  for (const tab of open()) if (tab.state === 'chaos-frozen') tab.state = 'live';
  const live = open().filter((tab) => tab.state === 'live');
  let observer: SoakTab | undefined;
  for (const tab of live) {
    try {
      await tab.api.hello();
      observer = tab;
      break;
    } catch (error) {
      violations.push(`tab ${tab.slot} does not answer at the end: ${message(error)}`);
    }
  }
  let updatesResent = 0;
  const records: WorkflowRecord[] = [];
  let rejections: FenceRejection[] = [];
  try {
    if (!observer) throw new Error('no live tab was left to observe the end');
    updatesResent = await redeliverUpdates(observer);
    await awaitTheEnd(observer, live);
  } catch (error) {
    violations.push(`end: ${message(error)}`);
  }
  const drained = Date.now();
  say(
    `every workflow ended (or the budget ran out) ${((drained - scheduleEnded) / 1000).toFixed(1)} s after the last event`,
  );
  // The evidence, read from the shared database through one tab.
  try {
    if (!observer) throw new Error('no live tab was left to read the evidence');
    for (const plan of schedule.workflows) {
      const read = await observer.page.evaluate(async (id) => {
        try {
          const description = await window.shuttle!.describe(id);
          const timeline = await window.shuttle!.timeline(id);
          return { description, timeline };
        } catch {
          return { description: null, timeline: [] };
        }
      }, plan.id);
      records.push({
        plan,
        input: inputOf(plan.n),
        description: read.description as WorkflowDescription | null,
        timeline: read.timeline as TimelineEntry[],
      });
    }
    rejections = await observer.page.evaluate(() => window.shuttle!.fenceRejections());
  } catch (error) {
    violations.push(`evidence: ${message(error)}`);
  }
  const evidence: SeedEvidence = {
    workflows: records,
    rejections,
    ledger: { rows: [...ledger.rows], conflicts: [...ledger.conflicts], malformed: [...ledger.malformed] },
  };
  const verdict = verifySeed(evidence);
  violations.push(...verdict.violations);
  for (const tab of tabs)
    for (const error of tab?.errors ?? [])
      violations.push(`tab ${tab.slot}: an error escaped to the page: ${error}`);
  await ledger.close();

  const report: SeedReport = {
    seed: options.seed,
    profile: options.profile,
    violations,
    figures: {
      ...verdict.figures,
      durationMs: Date.now() - began,
      scheduleMs: scheduleEnded - scheduleStarted,
      drainMs: drained - scheduleEnded,
      tabsOpened: tabs.length,
      faults,
      freezesInFlight,
      updatesResent,
    },
    plan: schedule.events.map(describeEvent),
    log,
    evidence,
  };
  say(summarize(report));
  return report;
}

/** One line: the verdict and the figures. */
export function summarize(report: SeedReport): string {
  const f = report.figures;
  const faults = Object.entries(f.faults)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  const takeovers = Object.entries(f.takeovers)
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ');
  return `${report.violations.length === 0 ? 'OK' : `${report.violations.length} VIOLATIONS`} in ${(f.durationMs / 1000).toFixed(1)} s (schedule ${(f.scheduleMs / 1000).toFixed(1)} s, drain ${(f.drainMs / 1000).toFixed(1)} s): ${f.workflows} workflows, ${f.tabsOpened} tabs, faults [${faults}] (${f.freezesInFlight} chaos freezes caught an activity in flight), takeovers [${takeovers || 'none'}], highest epoch ${f.highestEpoch}, ${f.attemptsStarted} attempts started (${f.reruns} reruns, ${f.startedWithoutRow} never reached the ledger), ${f.ledgerRows} ledger rows, ${f.refusedWrites} refused writes, ${f.updatesResent} updates resent`;
}
