/**
 * The browser soak's schedules: a pure function of a seed and a profile (the project's one seeded PRNG,
 * `seededRandom` in src/storage/seeded-random.ts), so `SHUTTLE_SEED=<n>` replays the same workflows, faults, tabs,
 * signals and updates in the same order. Real timing still varies between runs.
 *
 * Tabs are slots: tab `k` is the k-th tab opened. The generator follows each tab's state at the planned
 * times (live, frozen by the studio's chaos freeze until an estimated instant, frozen by the Page Lifecycle
 * API until its planned resume, gone) and only plans what is possible then:
 *
 * - between 3 and 5 tabs are open at every moment (`open` below 5, `close` and `crash` above 3);
 * - a freeze (either kind), a close or a crash always leaves another live tab, which can take over;
 * - signals, updates, starts and chaos-freeze requests come from a live tab (a frozen tab cannot call);
 * - a chaos freeze lasts 2–10 s (past TTL + grace = 8 s the others take its workflows over and its late
 *   write is refused; below it the engine resumes as if nothing happened); a lifecycle freeze is followed by
 *   its resume 1–6 s later;
 * - each workflow's signals and updates come after its start; half the workflows start before the faults.
 *
 * The runner (run-seed.ts) never runs an event early, and waits when a tab it needs live is still frozen
 * later than the generator estimated, so the tab states it meets are the ones planned here.
 */
import { seededRandom } from '../../src/storage/seeded-random';
import type { SoakInput } from './workflow';

export type ProfileName = 'short' | 'full';

export type Profile = {
  workflows: readonly [number, number];
  faults: readonly [number, number];
  initialTabs: readonly [number, number];
  /** Planned time between two events, in ms. */
  gapMs: readonly [number, number];
  signals: readonly [number, number];
  updates: readonly [number, number];
};

/** `short`: the three seeds in `npm test` (e2e/browser-soak.spec.ts); `full`: `npm run soak:browser`. */
export const profiles: Record<ProfileName, Profile> = {
  short: {
    workflows: [4, 5],
    faults: [8, 10],
    initialTabs: [3, 3],
    gapMs: [150, 700],
    signals: [1, 2],
    updates: [0, 1],
  },
  full: {
    workflows: [6, 10],
    faults: [15, 25],
    initialTabs: [3, 4],
    gapMs: [200, 1_200],
    signals: [1, 3],
    updates: [0, 2],
  },
};

export const minTabs = 3;
export const maxTabs = 5;

export type FaultKind = 'open' | 'close' | 'crash' | 'reload' | 'chaos-freeze' | 'lifecycle-freeze';

export type SoakEvent =
  | { at: number; kind: 'start'; workflow: number; from: number }
  | { at: number; kind: 'signal'; workflow: number; value: string; from: number }
  | { at: number; kind: 'update'; workflow: number; value: string; from: number }
  | { at: number; kind: 'open'; tab: number }
  | { at: number; kind: 'close'; tab: number }
  | { at: number; kind: 'crash'; tab: number }
  | { at: number; kind: 'reload'; tab: number }
  | { at: number; kind: 'chaos-freeze'; tab: number; from: number; seconds: number }
  | { at: number; kind: 'lifecycle-freeze'; tab: number }
  | { at: number; kind: 'lifecycle-resume'; tab: number };

/** A workflow of the schedule: its id, its input (without the ledger's URL), what is sent to it. */
export type WorkflowPlan = {
  n: number;
  id: string;
  input: Omit<SoakInput, 'ledger'>;
  /** Signal values, in the order they are sent. */
  signals: string[];
  /** Update values. */
  updates: string[];
  /** Started before the faults (`initial`) by tab `from`, or by a `start` event. */
  initialFrom: number | null;
};

export type SoakSchedule = {
  seed: number;
  profile: ProfileName;
  initialTabs: number;
  workflows: WorkflowPlan[];
  events: SoakEvent[];
  /** How many of the events are faults (open, close, crash, reload, either freeze). */
  faults: number;
};

type TabState =
  | { kind: 'live' }
  | { kind: 'chaos-frozen'; until: number }
  | { kind: 'lifecycle-frozen' }
  | { kind: 'gone' };

/** The chaos freeze waits for a claim renewal before it stalls (≤ 2 renew intervals): the estimate adds 1 s. */
const chaosFreezeStartEstimateMs = 1_000;

const faultWeights: readonly [FaultKind, number][] = [
  ['open', 1],
  ['close', 1],
  ['crash', 1.2],
  ['reload', 1],
  ['chaos-freeze', 1.2],
  ['lifecycle-freeze', 1.2],
];

/** The schedule of `seed` under `profile`. */
export function soakSchedule(seed: number, profileName: ProfileName): SoakSchedule {
  const profile = profiles[profileName];
  const random = seededRandom(seed);
  const between = (range: readonly [number, number]) =>
    range[0] + Math.floor(random() * (range[1] - range[0] + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  const tabs: TabState[] = [];
  const initialTabs = between(profile.initialTabs);
  for (let index = 0; index < initialTabs; index++) tabs.push({ kind: 'live' });
  let now = 0;
  const stateAt = (tab: number): TabState['kind'] => {
    const state = tabs[tab]!;
    if (state.kind === 'chaos-frozen' && state.until <= now) tabs[tab] = { kind: 'live' };
    return tabs[tab]!.kind;
  };
  const indices = () => tabs.map((_, index) => index);
  const open = () => indices().filter((tab) => stateAt(tab) !== 'gone');
  const live = () => indices().filter((tab) => stateAt(tab) === 'live');

  // Workflows: the first half (at least one) start before the faults.
  const count = between(profile.workflows);
  const initialCount = Math.max(1, Math.floor(count / 2));
  const workflows: WorkflowPlan[] = [];
  for (let n = 0; n < count; n++) {
    const signals = between(profile.signals);
    const updates = between(profile.updates);
    workflows.push({
      n,
      id: `soak-${seed}-w${n}`,
      input: {
        n,
        activityMs: 300 + Math.floor(random() * 900),
        sleepMs: 200 + Math.floor(random() * 600),
        signals,
        updates,
        failures: {
          reserve: random() < 0.4 ? between([1, 2]) : 0,
          pack: random() < 0.3 ? 1 : 0,
          charge: random() < 0.3 ? 1 : 0,
        },
      },
      signals: Array.from({ length: signals }, (_, k) => `w${n}-s${k}`),
      updates: Array.from({ length: updates }, (_, k) => `w${n}-u${k}`),
      initialFrom: n < initialCount ? pick(indices()) : null,
    });
  }

  // What each workflow still has to be sent: its start (if deferred), then its signals and updates
  // interleaved at random (signals keep their order).
  const queues = workflows.map((plan) => {
    const sends: ({ kind: 'signal'; value: string } | { kind: 'update'; value: string })[] = [];
    let signal = 0;
    let update = 0;
    while (signal < plan.signals.length || update < plan.updates.length) {
      const takeSignal = update >= plan.updates.length || (signal < plan.signals.length && random() < 0.6);
      sends.push(
        takeSignal
          ? { kind: 'signal', value: plan.signals[signal++]! }
          : { kind: 'update', value: plan.updates[update++]! },
      );
    }
    return [...(plan.initialFrom === null ? [{ kind: 'start' as const, value: '' }] : []), ...sends];
  });
  let actionsLeft = queues.reduce((sum, queue) => sum + queue.length, 0);
  let faultsLeft = between(profile.faults);
  const faults = faultsLeft;

  const events: SoakEvent[] = [];
  const resumes: { at: number; tab: number }[] = [];
  const flushResumes = (until: number) => {
    resumes.sort((a, b) => a.at - b.at);
    while (resumes.length > 0 && resumes[0]!.at <= until) {
      const { at, tab } = resumes.shift()!;
      if (tabs[tab]!.kind !== 'lifecycle-frozen') continue;
      now = Math.max(now, at);
      tabs[tab] = { kind: 'live' };
      events.push({ at: now, kind: 'lifecycle-resume', tab });
    }
  };

  const eligibleFaults = (): FaultKind[] => {
    const openTabs = open();
    const liveTabs = live();
    const kinds: FaultKind[] = [];
    if (openTabs.length < maxTabs) kinds.push('open');
    // Leave a live tab besides the one closed or crashed.
    if (openTabs.length > minTabs && openTabs.some((tab) => liveTabs.some((other) => other !== tab)))
      kinds.push('close', 'crash');
    if (openTabs.some((tab) => stateAt(tab) !== 'lifecycle-frozen')) kinds.push('reload');
    if (liveTabs.length >= 2) kinds.push('chaos-freeze', 'lifecycle-freeze');
    return kinds;
  };

  while (faultsLeft > 0 || actionsLeft > 0) {
    now += between(profile.gapMs);
    flushResumes(now);
    const liveTabs = live();
    const doFault =
      faultsLeft > 0 && (actionsLeft === 0 || random() < faultsLeft / (faultsLeft + actionsLeft));
    if (!doFault) {
      if (liveTabs.length === 0) continue; // wait for a freeze to end
      const candidates = queues.map((queue, index) => (queue.length > 0 ? index : -1)).filter((i) => i >= 0);
      const workflow = pick(candidates);
      const action = queues[workflow]!.shift()!;
      actionsLeft--;
      const from = pick(liveTabs);
      if (action.kind === 'start') events.push({ at: now, kind: 'start', workflow, from });
      else events.push({ at: now, kind: action.kind, workflow, value: action.value, from });
      continue;
    }
    const kinds = eligibleFaults();
    if (kinds.length === 0) continue;
    const weighted = faultWeights.filter(([kind]) => kinds.includes(kind));
    let roll = random() * weighted.reduce((sum, [, weight]) => sum + weight, 0);
    let kind = weighted[0]![0];
    for (const [candidate, weight] of weighted) {
      roll -= weight;
      if (roll < 0) {
        kind = candidate;
        break;
      }
    }
    faultsLeft--;
    switch (kind) {
      case 'open':
        tabs.push({ kind: 'live' });
        events.push({ at: now, kind: 'open', tab: tabs.length - 1 });
        break;
      case 'close':
      case 'crash': {
        const targets = open().filter((tab) => liveTabs.some((other) => other !== tab));
        const tab = pick(targets);
        tabs[tab] = { kind: 'gone' };
        events.push({ at: now, kind, tab });
        break;
      }
      case 'reload': {
        const tab = pick(open().filter((candidate) => stateAt(candidate) !== 'lifecycle-frozen'));
        tabs[tab] = { kind: 'live' };
        events.push({ at: now, kind: 'reload', tab });
        break;
      }
      case 'chaos-freeze': {
        const tab = pick(liveTabs);
        const from = pick(liveTabs.filter((other) => other !== tab));
        const seconds = between([2, 10]);
        tabs[tab] = { kind: 'chaos-frozen', until: now + seconds * 1_000 + chaosFreezeStartEstimateMs };
        events.push({ at: now, kind: 'chaos-freeze', tab, from, seconds });
        break;
      }
      case 'lifecycle-freeze': {
        const tab = pick(liveTabs);
        tabs[tab] = { kind: 'lifecycle-frozen' };
        resumes.push({ at: now + between([1_000, 6_000]), tab });
        events.push({ at: now, kind: 'lifecycle-freeze', tab });
        break;
      }
    }
  }
  flushResumes(Number.POSITIVE_INFINITY);
  return { seed, profile: profileName, initialTabs, workflows, events, faults };
}

/** One line per event, for the output and a failing seed's report. */
export function describeEvent(event: SoakEvent): string {
  const at = `+${(event.at / 1000).toFixed(1)}s`;
  switch (event.kind) {
    case 'start':
      return `${at} start w${event.workflow} from tab ${event.from}`;
    case 'signal':
    case 'update':
      return `${at} ${event.kind} w${event.workflow} ${event.value} from tab ${event.from}`;
    case 'chaos-freeze':
      return `${at} chaos-freeze tab ${event.tab} for ${event.seconds} s (asked by tab ${event.from})`;
    default:
      return `${at} ${event.kind} tab ${event.tab}`;
  }
}
