/**
 * The operator's commands: `shuttle workflow …`, `shuttle schedule …` and `shuttle queue …`, for a person on
 * call or a script.
 *
 * Each command opens the store (`--database-url`, `$SHUTTLE_DATABASE_URL`, or the embedded store of
 * `--data-dir`), creates an observer engine on it (`claimWorkflows: false`: it reads, starts, signals,
 * queries, updates, cancels and terminates, but never claims or runs a workflow — the workers do) and closes
 * both before it exits. It opens no session and writes no presence: a command leaves nothing behind but what
 * it was asked to do.
 *
 * Output: an aligned table or `label: value` lines for people; `--json` prints one JSON document (what the
 * engine's API returns) for scripts. Errors are one line on stderr.
 *
 * Exit codes (the same for every command, so a script can tell what happened):
 *   0  done
 *   1  `workflow result`: the workflow ended without completing (failed, cancelled, terminated, timed out)
 *   2  the command line, the store or the input is wrong (nothing was written)
 *   3  no such workflow, run, schedule or queue
 *   4  refused in the workflow's current state (already exists, already finished, not finished, update
 *      rejected, query failed, workflow type not known here)
 *   5  gave up waiting (`result --timeout`, an update's timeout)
 * `workflow replay` (also `shuttle replay`) exits 1 when a history diverged from the definitions given.
 */
import { readFileSync } from 'node:fs';
import {
  attributesFromText,
  formatAttributes,
  historiesIn,
  isTerminal,
  replay,
  type AttributeInput,
  type RecordedHistory,
  type ReplayReport,
} from '../../engine';
import { parseArgs } from 'node:util';
import type {
  Engine,
  ListFilter,
  QueuePosition,
  QueueStartOptions,
  QueueView,
  ScheduleInfo,
  TimelineEntry,
  WorkflowDescription,
  WorkflowStatus,
  WorkflowSummary,
} from '../../engine';
import { isWorkflowStatus, workflowStatuses } from '../../engine/vocabulary';
import { validateQueueStart } from '../../engine/queues/queue-options';
import { durationFlag, integerFlag, timeFlag } from '../flags';
import { classifyError } from '../outcomes';
import { StartupError } from '../store';
import type { ActivityLimitView } from '../../protocol';
import { brief, duration, fields, shortEngineId, table, time } from './format';

/** Exit codes of the operator commands (see the module comment). */
export const exitCodes = {
  ok: 0,
  workflowDidNotComplete: 1,
  /** `workflow replay`: a history did not replay against the definitions given. */
  replayDiverged: 1,
  usage: 2,
  notFound: 3,
  refused: 4,
  timedOut: 5,
} as const;

/** What a command needs from its surroundings: where to print, and how to reach the store. */
export type OperatorIo = {
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * Opens the store the flags name and an observer engine on it, with the definitions of `--workflows` /
   * `--demos` registered (only `workflow start` needs them). `labels` maps engine ids to the names engines
   * give themselves, as far as the store still knows them.
   */
  open(flags: StoreFlags): Promise<{
    engine: Engine;
    labels(): Promise<Map<string, string>>;
    /**
     * The activity groups as the store shows them (src/host/activity-slots.ts): the engine's own, then every
     * group with a slot held now. Without it, the engine's own only (`engine.activityLimits()`).
     */
    activityLimits?(): Promise<ActivityLimitView[]>;
    close(): Promise<void>;
  }>;
  /** Now, in epoch ms (a test passes its clock). */
  now(): number;
  /** Stops a command that follows changes (`list --watch`): Ctrl-C in the terminal. */
  signal?: AbortSignal;
};

/** The flags that say where the store is and which definitions to load. */
export type StoreFlags = {
  /** No store: an empty one in memory (`workflow replay --file` reads nothing from a store). */
  memory?: boolean;
  databaseUrl?: string;
  dataDir?: string;
  schema?: string;
  workflows: string[];
  demos: boolean;
  /** `--codec`: the module of the store's payload codec (an encoded store needs it). */
  codec?: string;
};

/** `--workflows` / `--demos`: the definitions a command checks its input against (start, schedules). */
const definitionOptions = {
  workflows: { type: 'string', multiple: true },
  demos: { type: 'boolean' },
} as const;

function definitionHelp(what: string): string[] {
  return [
    `--workflows PATH     the definition file or folder that defines ${what} (repeatable), as given`,
    '                     to the workers: the input is checked against it before anything is written',
    '--demos              the built-in demo definitions',
  ];
}

const storeOptions = {
  'database-url': { type: 'string' },
  'data-dir': { type: 'string' },
  schema: { type: 'string' },
  codec: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type OptionSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

type Subcommand = {
  /** Positional arguments, in order. */
  args: readonly string[];
  summary: string;
  options: OptionSpec;
  help: readonly string[];
  /** Whether these flags need no store (then the engine runs on an empty one in memory). */
  storeless?(values: Context['values']): boolean;
  run(context: Context): Promise<number>;
};

type Context = {
  engine: Engine;
  values: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
  io: OperatorIo;
  json: boolean;
  labels(): Promise<Map<string, string>>;
  activityLimits(): Promise<ActivityLimitView[]>;
};

const storeHelp = [
  '--database-url URL   PostgreSQL database of the fleet (default: $SHUTTLE_DATABASE_URL; without one, the',
  '                     embedded store in --data-dir, which only one process may open at a time)',
  '--data-dir DIR       folder of the embedded store (default .shuttle/db)',
  '--schema NAME        PostgreSQL schema of the store (default shuttle)',
  '--codec MODULE       the payload codec of an encoded store (a module exporting `codec`)',
  '--json               print one JSON document instead of a table',
];

function print(context: Context, json: unknown, text: () => string | Promise<string>): Promise<number> {
  return (async () => {
    context.io.stdout(`${context.json ? JSON.stringify(json, null, 2) : await text()}\n`);
    return exitCodes.ok;
  })();
}

/** A JSON flag's value, or a StartupError naming the flag. */
function jsonFlag(name: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new StartupError(
      `--${name} is not JSON (${error instanceof Error ? error.message : String(error)}). Quote it for the shell, e.g. --${name} '{"orderId":"A-1"}'.`,
    );
  }
}

function inputOf(values: Context['values']): unknown {
  const text = values.input as string | undefined;
  const file = values['input-file'] as string | undefined;
  if (text !== undefined && file !== undefined)
    throw new StartupError('Give the input once: --input JSON or --input-file FILE, not both.');
  if (file === undefined) return jsonFlag('input', text);
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (error) {
    throw new StartupError(
      `--input-file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
  return jsonFlag('input-file', content);
}

function runOf(values: Context['values']): number | undefined {
  return integerFlag('run', values.run as string | undefined, 1);
}

function statusesOf(text: string | undefined): WorkflowStatus[] | undefined {
  if (text === undefined) return undefined;
  const statuses = text.split(',').map((part) => part.trim());
  for (const status of statuses)
    if (!isWorkflowStatus(status))
      throw new StartupError(
        `--status '${status}' is not a status. Statuses: ${workflowStatuses.join(', ')}.`,
      );
  return statuses as WorkflowStatus[];
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

function engineName(labels: Map<string, string>, engineId: string | undefined | null): string {
  if (!engineId) return '-';
  return labels.get(engineId) ?? shortEngineId(engineId);
}

function summaryRows(
  items: readonly WorkflowSummary[],
  labels: Map<string, string>,
  now: number,
): string[][] {
  return items.map((row) => [
    row.workflowId,
    row.workflowType,
    row.status,
    String(row.run),
    row.owner ? engineName(labels, row.owner.engineId) : '-',
    row.waitingOn ?? (row.error ? `error: ${row.error}` : '-'),
    row.endedAt
      ? `ended ${duration(now - row.endedAt)} ago`
      : `started ${duration(now - (row.startedAt ?? row.createdAt))} ago`,
  ]);
}

/**
 * A queued workflow's place, on one line: waiting (its position, 1 = admitted next) or admitted (its slot),
 * or, once it ended, the queue it went through.
 */
function queueLine(description: WorkflowDescription, position: QueuePosition | null, now: number): string {
  const queue = description.queue!;
  const about = [
    `priority ${queue.priority}`,
    ...(queue.key === undefined ? [] : [`key '${queue.key}'`]),
  ].join(', ');
  if (position?.status === 'waiting')
    return `${queue.name}: waiting, position ${position.position ?? '?'} (1 = admitted next), for ${duration(now - queue.enqueuedAt)}; ${about}${queue.notBefore !== undefined && queue.notBefore > now ? `; not before ${time(queue.notBefore)}` : ''}`;
  if (position?.status === 'admitted')
    return `${queue.name}: admitted ${duration(now - (position.admittedAt ?? queue.admittedAt ?? now))} ago${position.slot === undefined ? '' : ` (slot ${position.slot})`} after waiting ${duration((queue.admittedAt ?? now) - queue.enqueuedAt)}; ${about}`;
  return `${queue.name}: ${queue.admittedAt === undefined ? 'never admitted' : `waited ${duration(queue.admittedAt - queue.enqueuedAt)}`}; ${about}`;
}

function describeText(
  description: WorkflowDescription,
  labels: Map<string, string>,
  now: number,
  position?: QueuePosition | null,
): string {
  const entries: [string, string][] = [
    ['Workflow', description.workflowId],
    ['Type', `${description.workflowType} v${description.version}`],
    ['Run', String(description.run)],
    ['Status', description.status + (description.cancelRequested ? ' (cancel requested)' : '')],
    ['Created', time(description.createdAt)],
    ['Started', time(description.startedAt)],
    ['Ended', time(description.endedAt)],
    [
      'Owner',
      description.owner
        ? `${engineName(labels, description.owner.engineId)} (epoch ${description.owner.epoch}, claim expires ${time(description.owner.expiresAt)})`
        : '-',
    ],
    [
      'Waiting on',
      description.pending
        ? `${description.pending.summary} for ${duration(now - description.pending.since)}`
        : '-',
    ],
    [
      'Position',
      `${plural(description.position, 'operation')} resolved; ${plural(description.timelineLength, 'timeline entry', 'timeline entries')}`,
    ],
    ['Input', brief(description.input, 200)],
  ];
  if (description.result !== undefined) entries.push(['Result', brief(description.result, 200)]);
  if (description.error) entries.push(['Error', `${description.error.name}: ${description.error.message}`]);
  if (description.reason) entries.push(['Reason', description.reason]);
  if (description.attributes) entries.push(['Attributes', formatAttributes(description.attributes)]);
  if (description.queue) entries.push(['Queue', queueLine(description, position ?? null, now)]);
  if (description.startKey)
    entries.push(['Start key', `${description.startKey.kind} '${description.startKey.key}'`]);
  if (description.parentId) entries.push(['Parent', description.parentId]);
  if (description.scheduledBy) entries.push(['Scheduled by', JSON.stringify(description.scheduledBy)]);
  if (description.forkedFrom) {
    const { id, run, position } = description.forkedFrom;
    entries.push(['Forked from', `${id} run ${run}, from #${position}`]);
  }
  if (description.continuedFrom !== undefined)
    entries.push(['Continued from', `run ${description.continuedFrom} (continued as new)`]);
  if (description.status === 'continued-as-new') entries.push(['Continued as', `run ${description.run + 1}`]);
  if (description.bufferedSignals.length > 0)
    entries.push([
      'Buffered signals',
      description.bufferedSignals.map((signal) => signal.name).join(', ') +
        (description.bufferedSignalsMore ? ', …' : ''),
    ]);
  if (description.corrupt)
    entries.push(['Corrupt', `${description.corrupt.key}: ${description.corrupt.message}`]);
  return fields(entries);
}

function timelineText(entries: readonly TimelineEntry[], labels: Map<string, string>): string {
  return table(
    ['SEQ', 'AT', 'ENGINE', 'EPOCH', 'KIND', 'DETAIL'],
    entries.map((entry) => [
      String(entry.seq),
      time(entry.at),
      engineName(labels, entry.engineId),
      String(entry.epoch),
      entry.kind,
      brief(entry.detail, 100),
    ]),
  );
}

function scheduleRows(schedules: readonly ScheduleInfo[]): string[][] {
  return schedules.map((schedule) => [
    schedule.name,
    schedule.spec.cron,
    schedule.spec.timezone,
    schedule.spec.workflow,
    schedule.paused ? 'paused' : 'active',
    time(schedule.nextFireAt[0]),
    String(schedule.running.length),
  ]);
}

function scheduleText(schedule: ScheduleInfo): string {
  return fields([
    ['Schedule', schedule.name],
    ['Cron', `${schedule.spec.cron} (${schedule.spec.timezone})`],
    ['Workflow', schedule.spec.workflow],
    ['Input', brief(schedule.spec.input, 200)],
    ['Overlap', String(schedule.spec.overlap)],
    ['Catch-up', JSON.stringify(schedule.spec.catchUp)],
    ['State', schedule.paused ? `paused since ${time(schedule.pausedAt)}` : 'active'],
    ['Next', schedule.nextFireAt.map(time).join(', ') || '-'],
    ['Running', schedule.running.join(', ') || '-'],
    [
      'Last slots',
      schedule.lastSlots
        .slice(0, 5)
        .map(
          (slot) => `${time(slot.slot)} ${slot.outcome}${'workflowId' in slot ? ` ${slot.workflowId}` : ''}`,
        )
        .join('; ') || '-',
    ],
  ]);
}

/**
 * Checks every flag's value before the store is opened, so a command with a bad value writes nothing and
 * does not even connect (the commands read the same values again, through the same functions).
 */
function checkFlags(values: Context['values']): void {
  if (values.input !== undefined || values['input-file'] !== undefined) inputOf(values);
  jsonFlag('payload', values.payload as string | undefined);
  jsonFlag('arg', values.arg as string | undefined);
  for (const name of ['timeout', 'start-delay', 'execution-timeout', 'interval'])
    durationFlag(name, values[name] as string | undefined);
  runOf(values);
  integerFlag('limit', values.limit as string | undefined, 1);
  for (const [flag] of timeRangeFlags) timeFlag(flag, values[flag] as string | undefined, Date.now());
  statusesOf(values.status as string | undefined);
  queueStartOf(values);
}

/**
 * The queue options of `workflow start` (`--queue`, `--concurrency-key`, `--priority`, `--singleton`,
 * `--if-active`, `--debounce KEY:WINDOW`, `--debounce-max-wait`), checked by the engine's own rules, so a bad
 * value is refused (exit 2) in the engine's words before the store is opened.
 */
function queueStartOf(values: Context['values']): QueueStartOptions {
  const text = (name: string) => values[name] as string | undefined;
  const options: QueueStartOptions = {};
  if (text('queue') !== undefined) options.queue = text('queue')!;
  if (text('concurrency-key') !== undefined) options.concurrencyKey = text('concurrency-key')!;
  const priority = text('priority');
  // A number is passed as one; anything else as the text, which the engine quotes when it refuses it.
  if (priority !== undefined)
    options.priority = (/^-?\d+(\.\d+)?$/.test(priority.trim()) ? Number(priority) : priority) as number;
  if (text('if-active') !== undefined && text('singleton') === undefined)
    throw new StartupError(
      '--if-active says what a start does while its singleton key is taken: give it with --singleton KEY (e.g. --singleton customer-42 --if-active refuse).',
    );
  if (text('singleton') !== undefined)
    options.singleton = {
      key: text('singleton')!,
      ...(text('if-active') === undefined
        ? {}
        : { ifActive: text('if-active') as NonNullable<QueueStartOptions['singleton']>['ifActive'] }),
    };
  const debounce = text('debounce');
  if (text('debounce-max-wait') !== undefined && debounce === undefined)
    throw new StartupError(
      '--debounce-max-wait caps how long a debounced start can be put off: give it with --debounce KEY:WINDOW (e.g. --debounce customer-42:5s --debounce-max-wait 1m).',
    );
  if (debounce !== undefined) {
    const colon = debounce.lastIndexOf(':');
    const window = colon < 0 ? '' : debounce.slice(colon + 1).trim();
    if (colon <= 0 || window === '')
      throw new StartupError(
        `--debounce must be KEY:WINDOW, the window in ms or as a duration (e.g. --debounce customer-42:5s or customer-42:5000); got '${debounce}'.`,
      );
    const windowMs = /^\d+$/.test(window) ? Number(window) : durationFlag('debounce', window)!;
    const maxWaitMs = durationFlag('debounce-max-wait', text('debounce-max-wait'));
    options.debounce = {
      key: debounce.slice(0, colon),
      windowMs,
      ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
    };
  }
  validateQueueStart(options);
  return options;
}

/** The recorded histories in a file (`workflow replay --file`), or a StartupError naming it. */
function historiesOfFile(file: string): RecordedHistory[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new StartupError(`--file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new StartupError(
      `--file ${file} is not JSON (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  try {
    return historiesIn(document, `--file ${file}`);
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
}

/** The histories `workflow replay` reads from the store: `--id`s, or what the filter flags match. */
async function storeHistories(context: Context): Promise<RecordedHistory[]> {
  const { engine, values, io } = context;
  const ids = values.id as string[] | undefined;
  if (ids) return Promise.all(ids.map((id) => engine.history(id)));
  const limit = integerFlag('limit', (values.limit as string | undefined) ?? '1000', 1)!;
  const status = statusesOf(values.status as string | undefined) ?? ['running', 'suspended'];
  const createdFrom = timeFlag('created-since', values['created-since'] as string | undefined, io.now());
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.list({
      status,
      limit: Math.min(1000, limit - found.length),
      ...(values.type ? { workflowType: values.type as string } : {}),
      ...(createdFrom === undefined ? {} : { createdFrom }),
      ...(cursor ? { cursor } : {}),
    });
    found.push(...page.items.map((item) => item.workflowId));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && found.length < limit);
  const histories: RecordedHistory[] = [];
  for (let index = 0; index < found.length; index += 16)
    histories.push(
      ...(
        await Promise.all(
          found.slice(index, index + 16).map((id) =>
            engine.history(id).catch((error: unknown) => {
              // Purged since it was listed: nothing to replay.
              if (error instanceof Error && error.name === 'WorkflowNotFoundError') return null;
              throw error;
            }),
          ),
        )
      ).filter((history): history is RecordedHistory => history !== null),
    );
  return histories;
}

/** The time-range flags of `workflow list`, and the list filter field each sets. */
const timeRangeFlags = [
  ['created-since', 'createdFrom'],
  ['created-until', 'createdTo'],
  ['ended-since', 'endedFrom'],
  ['ended-until', 'endedTo'],
] as const;

/** What `list --watch` compares to tell that a row changed. */
function rowState(row: WorkflowSummary): string {
  return JSON.stringify([row.status, row.owner?.engineId ?? null, row.waitingOn, row.error ?? null]);
}

/**
 * `list --watch`: reads the listed page again every `--interval` and prints one line per workflow that
 * appeared or changed (status, owner, what it waits on), until the command is stopped (Ctrl-C). Polling the
 * page the filters select is deliberate: it works the same on every store, costs one list read per interval,
 * and a watcher that fell behind (a slow terminal) prints the latest state, never a backlog.
 */
async function watchList(
  context: Context,
  filter: ListFilter,
  first: readonly WorkflowSummary[],
): Promise<number> {
  const { engine, io, values } = context;
  const intervalMs = durationFlag('interval', values.interval as string | undefined) ?? 1000;
  const seen = new Map(first.map((row) => [`${row.workflowId}#${row.run}`, rowState(row)]));
  if (!context.json) io.stdout(`Watching (every ${duration(intervalMs)}; Ctrl-C stops)…\n`);
  while (!io.signal?.aborted) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, intervalMs);
      io.signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    if (io.signal?.aborted) break;
    const page = await engine.list(filter);
    const changed = page.items.filter((row) => seen.get(`${row.workflowId}#${row.run}`) !== rowState(row));
    if (changed.length === 0) continue;
    const labels = await context.labels();
    for (const row of changed) {
      seen.set(`${row.workflowId}#${row.run}`, rowState(row));
      io.stdout(
        context.json
          ? `${JSON.stringify(row)}\n`
          : `${time(io.now())}  ${row.workflowId}  ${row.workflowType}  ${row.status}  owner ${row.owner ? engineName(labels, row.owner.engineId) : '-'}  ${row.waitingOn ?? (row.error ? `error: ${row.error}` : '-')}\n`,
      );
    }
  }
  return exitCodes.ok;
}

/** Refuses a destructive command without `--yes`, saying what it would do. */
function confirm(values: Context['values'], what: string): void {
  if (values.yes !== true) throw new StartupError(`This ${what} and cannot be undone. Add --yes to do it.`);
}

const workflowCommands: Record<string, Subcommand> = {
  list: {
    args: [],
    summary: 'List workflows in id order, a page at a time.',
    options: {
      status: { type: 'string' },
      type: { type: 'string' },
      'id-prefix': { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      'all-runs': { type: 'boolean' },
      'created-since': { type: 'string' },
      'created-until': { type: 'string' },
      'ended-since': { type: 'string' },
      'ended-until': { type: 'string' },
      where: { type: 'string', multiple: true },
      watch: { type: 'boolean' },
      interval: { type: 'string' },
    },
    help: [
      "--where 'NAME OP V'  search attributes: OP one of = > >= < <=, V read as the attribute's type (a time:",
      '                     ISO 8601 or epoch ms); repeat for more, all must hold: --where customer=acme',
      "                     --where 'amount>=100'. Walks the attribute's index, not every workflow",
      '--status S[,S…]      only these statuses (pending, running, suspended, completed, failed, …)',
      '--type NAME          only this workflow type',
      '--id-prefix P        only ids starting with P',
      "--limit N            at most N workflows (1–1000, default 50); the next page's cursor is printed",
      '--cursor C           the page after the one that printed C',
      '--all-runs           also the earlier runs kept by run history',
      '--created-since T    only workflows created at or after T: a duration ago (2h, 7d) or an ISO time',
      '--created-until T    only workflows created before T',
      '--ended-since T      only workflows that ended at or after T (e.g. --status failed --ended-since 1h)',
      '--ended-until T      only workflows that ended before T',
      '--watch              then follow changes: one line per workflow that appears or changes status,',
      '                     owner or what it waits on (with --json, one JSON row per line), until Ctrl-C',
      '--interval DURATION  how often --watch reads the store (default 1s)',
    ],
    async run(context) {
      const { values, engine, io } = context;
      const statuses = statusesOf(values.status as string | undefined);
      const filter: ListFilter = {
        limit: integerFlag('limit', (values.limit as string | undefined) ?? '50', 1),
        ...(statuses ? { status: statuses } : {}),
        ...(values.type ? { workflowType: values.type as string } : {}),
        ...(values['id-prefix'] ? { idPrefix: values['id-prefix'] as string } : {}),
        ...(values.cursor ? { cursor: values.cursor as string } : {}),
        ...(values['all-runs'] ? { allRuns: true } : {}),
        ...(values.where ? { where: values.where as string[] } : {}),
        ...Object.fromEntries(
          timeRangeFlags.flatMap(([flag, field]) => {
            const at = timeFlag(flag, values[flag] as string | undefined, io.now());
            return at === undefined ? [] : [[field, at]];
          }),
        ),
      };
      const page = await engine.list(filter);
      const printed = await print(context, page, async () => {
        if (page.items.length === 0) return 'No workflows match.';
        const labels = await context.labels();
        // Search attributes get a column when a row of the page has some.
        const withAttributes = page.items.some((row) => row.attributes !== undefined);
        const rows = summaryRows(page.items, labels, io.now());
        const text = table(
          [
            'ID',
            'TYPE',
            'STATUS',
            'RUN',
            'OWNER',
            'WAITING ON',
            'WHEN',
            ...(withAttributes ? ['ATTRIBUTES'] : []),
          ],
          withAttributes
            ? rows.map((row, index) => [...row, formatAttributes(page.items[index]!.attributes) || '-'])
            : rows,
        );
        return page.nextCursor ? `${text}\n\nMore: --cursor ${page.nextCursor}` : text;
      });
      if (values.watch !== true) return printed;
      return watchList(context, { ...filter, cursor: undefined }, page.items);
    },
  },
  describe: {
    args: ['id'],
    summary: "A workflow's state: status, owner, what it waits on, input, result or error.",
    options: { run: { type: 'string' } },
    help: ['--run N              an earlier run kept by run history (default: the latest)'],
    async run(context) {
      const run = runOf(context.values);
      const description = await context.engine.describe(context.positionals[0]!, run ? { run } : {});
      // A workflow started onto a queue: where it stands there (waiting, or admitted with its slot).
      const position =
        description.queue && !isTerminal(description.status) && run === undefined
          ? await context.engine.queuePosition(description.workflowId)
          : null;
      return print(context, position ? { ...description, queuePosition: position } : description, async () =>
        describeText(description, await context.labels(), context.io.now(), position),
      );
    },
  },
  timeline: {
    args: ['id'],
    summary: "A workflow's timeline: every event, with the engine and epoch that wrote it.",
    options: { run: { type: 'string' } },
    help: ['--run N              an earlier run kept by run history (default: the latest)'],
    async run(context) {
      const run = runOf(context.values);
      const entries = await context.engine.timeline(context.positionals[0]!, run ? { run } : {});
      return print(context, entries, async () => timelineText(entries, await context.labels()));
    },
  },
  result: {
    args: ['id'],
    summary: 'Wait for a workflow to finish and print its result (exit 1 if it did not complete).',
    options: { run: { type: 'string' }, timeout: { type: 'string' } },
    help: [
      '--run N              an earlier run kept by run history (default: the latest)',
      '--timeout DURATION   give up after this long (30s, 5m, …; exit 5); default: wait as long as it takes',
    ],
    async run(context) {
      const { engine, positionals, values, io } = context;
      const run = runOf(values);
      const timeoutMs = durationFlag('timeout', values.timeout as string | undefined);
      const id = positionals[0]!;
      const handle = engine.handle(id, run ? { run } : {});
      await handle.describe(); // a missing workflow is exit 3 at once, not a wait
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = await Promise.race([
        handle.result().then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
        ...(timeoutMs === undefined
          ? []
          : [new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)))]),
      ]);
      clearTimeout(timer);
      if (waited === null) {
        io.stderr(
          `Workflow '${id}' has not finished after ${duration(timeoutMs!)}; still waiting in the store.\n`,
        );
        return exitCodes.timedOut;
      }
      if (!waited.ok) {
        const terminal = [
          'WorkflowFailedError',
          'WorkflowCancelledError',
          'WorkflowTerminatedError',
          'WorkflowTimedOutError',
        ];
        const error = waited.error as Error;
        if (!terminal.includes(error?.name)) throw waited.error;
        const description = await handle.describe();
        if (context.json)
          io.stdout(
            `${JSON.stringify({ status: description.status, error: description.error ?? null, reason: description.reason ?? null }, null, 2)}\n`,
          );
        else io.stdout(`${description.status}: ${error.message}\n`);
        return exitCodes.workflowDidNotComplete;
      }
      io.stdout(
        `${context.json ? JSON.stringify({ status: 'completed', result: waited.value ?? null }, null, 2) : JSON.stringify(waited.value ?? null, null, 2)}\n`,
      );
      return exitCodes.ok;
    },
  },
  start: {
    args: ['type'],
    summary: 'Start a workflow of a type the given definition files (or the demos) define.',
    options: {
      id: { type: 'string' },
      input: { type: 'string' },
      'input-file': { type: 'string' },
      'idempotency-key': { type: 'string' },
      'start-delay': { type: 'string' },
      'execution-timeout': { type: 'string' },
      attribute: { type: 'string', multiple: true },
      queue: { type: 'string' },
      'concurrency-key': { type: 'string' },
      priority: { type: 'string' },
      singleton: { type: 'string' },
      'if-active': { type: 'string' },
      debounce: { type: 'string' },
      'debounce-max-wait': { type: 'string' },
      ...definitionOptions,
    },
    help: [
      ...definitionHelp('the type'),
      '--id ID              the workflow id (default: a random UUID)',
      '--input JSON         the input, as JSON (quote it for the shell)',
      '--input-file FILE    the input, from a JSON file',
      "--idempotency-key K  at most one start per key within the engines' window (a repeat prints that run)",
      '--start-delay D      start it this long from now (pending until then)',
      '--execution-timeout D  time it out if it has not finished this long after it started',
      '--attribute N=V      a search attribute it starts with, read as the type its definition declares',
      '                     (repeat for more): --attribute customer=acme --attribute amount=120',
      '--queue NAME         start it onto this queue (declared by a --workflows module with defineQueue);',
      "                     default: its definition's queue. It waits there until the queue has room",
      "--concurrency-key K  counted with the starts of this key by the queue's perKeyConcurrency",
      '--priority N         1 (admitted first) to 10; default 5 (needs a queue)',
      '--singleton KEY      at most one workflow with this key waiting or running: a repeat prints that one',
      "--if-active P        with --singleton, while the key's workflow is active: join (default) or refuse",
      '                     (exit 4, nothing started)',
      '--debounce KEY:W     start it W (ms, or 5s, 1m) after the last start with this key; a start while',
      '                     one waits gives it this input and puts it off again',
      '--debounce-max-wait D  never put a debounced start off more than D after the first',
    ],
    async run(context) {
      const { engine, positionals, values } = context;
      const input = inputOf(values);
      const queueOptions = queueStartOf(values);
      const startDelayMs = durationFlag('start-delay', values['start-delay'] as string | undefined);
      const executionTimeoutMs = durationFlag(
        'execution-timeout',
        values['execution-timeout'] as string | undefined,
      );
      const handle = await engine.start(positionals[0]!, input, {
        ...(values.id ? { id: values.id as string } : {}),
        ...(values['idempotency-key'] ? { idempotencyKey: values['idempotency-key'] as string } : {}),
        ...(startDelayMs ? { startDelayMs } : {}),
        ...(executionTimeoutMs ? { executionTimeoutMs } : {}),
        ...queueOptions,
        ...(values.attribute
          ? {
              attributes: attributesFromText(
                engine.definitions().find((definition) => definition.name === positionals[0])?.attributes,
                values.attribute as string[],
              ) as Record<string, AttributeInput>,
            }
          : {}),
      });
      // Started onto a queue (its own, or its definition's): where it stands now.
      const queued =
        queueOptions.queue !== undefined ||
        engine.definitions().some((definition) => definition.name === positionals[0] && definition.queue);
      const position = queued ? await engine.queuePosition(handle.workflowId).catch(() => null) : null;
      const answer = {
        workflowId: handle.workflowId,
        run: handle.run ?? null,
        started: handle.started,
        ...(position ? { queue: position } : {}),
      };
      const run = `${handle.workflowId} (run ${handle.run ?? 1})`;
      const where =
        position?.status === 'waiting'
          ? ` It waits in queue '${position.queue}' at position ${position.position ?? '?'}.`
          : position?.status === 'admitted'
            ? ` Queue '${position.queue}' admitted it${position.slot === undefined ? '' : ` (slot ${position.slot})`}.`
            : '';
      return print(context, answer, () =>
        handle.started
          ? `Started ${run}.${where}`
          : queueOptions.singleton
            ? `Not started: singleton key '${queueOptions.singleton.key}' belongs to ${run}, which is still active.${where}`
            : queueOptions.debounce
              ? `Debounced: ${run} was waiting with key '${queueOptions.debounce.key}'; it takes this input and starts ${duration(queueOptions.debounce.windowMs)} from now (unless another start puts it off again).${where}`
              : `Not started: the idempotency key already started ${run}.${where}`,
      );
    },
  },
  signal: {
    args: ['id', 'name'],
    summary: 'Send a signal to a workflow (buffered until it waits for one of that name).',
    options: { payload: { type: 'string' } },
    help: ["--payload JSON       the signal's payload, as JSON"],
    async run(context) {
      const [id, name] = context.positionals as [string, string];
      await context.engine.signal(
        id,
        name,
        jsonFlag('payload', context.values.payload as string | undefined),
      );
      return print(
        context,
        { workflowId: id, signal: name, sent: true },
        () => `Sent signal '${name}' to ${id}.`,
      );
    },
  },
  query: {
    args: ['id', 'name'],
    summary: "Ask a running workflow a query; its holder answers from the workflow's state.",
    options: { arg: { type: 'string' } },
    help: ["--arg JSON           the query's argument, as JSON"],
    async run(context) {
      const [id, name] = context.positionals as [string, string];
      const value = await context.engine.query(
        id,
        name,
        jsonFlag('arg', context.values.arg as string | undefined),
      );
      return print(context, value ?? null, () => JSON.stringify(value ?? null, null, 2));
    },
  },
  update: {
    args: ['id', 'name'],
    summary: 'Send an update and wait until the workflow applied it (validated before it is sent).',
    options: { arg: { type: 'string' }, timeout: { type: 'string' } },
    help: [
      "--arg JSON           the update's argument, as JSON",
      '--timeout DURATION   give up waiting after this long (default 60s; exit 5)',
    ],
    async run(context) {
      const [id, name] = context.positionals as [string, string];
      const timeoutMs = durationFlag('timeout', context.values.timeout as string | undefined);
      const value = await context.engine.update(
        id,
        name,
        jsonFlag('arg', context.values.arg as string | undefined),
        timeoutMs ? { timeoutMs } : {},
      );
      return print(context, value ?? null, () => JSON.stringify(value ?? null, null, 2));
    },
  },
  cancel: {
    args: ['id'],
    summary: 'Ask a workflow to cancel (its code can clean up).',
    options: { reason: { type: 'string' } },
    help: ['--reason TEXT        why, kept with the workflow'],
    async run(context) {
      const id = context.positionals[0]!;
      await context.engine.cancel(id, context.values.reason as string | undefined);
      return print(context, { workflowId: id, cancelRequested: true }, () => `Asked ${id} to cancel.`);
    },
  },
  terminate: {
    args: ['id'],
    summary: 'End a workflow at once, without running its code.',
    options: { reason: { type: 'string' } },
    help: ['--reason TEXT        why, kept with the workflow'],
    async run(context) {
      const id = context.positionals[0]!;
      await context.engine.terminate(id, context.values.reason as string | undefined);
      return print(context, { workflowId: id, terminated: true }, () => `Terminated ${id}.`);
    },
  },
  fork: {
    args: ['id'],
    summary:
      'Run a workflow again from one of its operations: the ones before it are replayed from its history, it and the rest run anew.',
    options: {
      from: { type: 'string' },
      run: { type: 'string' },
      'new-id': { type: 'string' },
      version: { type: 'string' },
      ...definitionOptions,
    },
    help: [
      ...definitionHelp('its workflow'),
      "--from N             the operation to run again (a timeline entry's #N; 0: all of it). Default, for",
      '                     a run that failed, was cancelled, terminated or timed out: where it stopped',
      '--run N              the run to copy (default: the latest)',
      '--new-id ID          fork into this workflow id (default: the next run of the same id, which must',
      '                     have ended)',
      "--version N          run it on this version of the definition (default: the copied run's)",
    ],
    async run(context) {
      const { engine, positionals, values } = context;
      const fromPosition = integerFlag('from', values.from as string | undefined, 0);
      const run = runOf(values);
      const version = integerFlag('version', values.version as string | undefined, 1);
      const newId = values['new-id'] as string | undefined;
      const handle = await engine.fork(positionals[0]!, {
        ...(fromPosition === undefined ? {} : { fromPosition }),
        ...(run === undefined ? {} : { run }),
        ...(newId === undefined ? {} : { newId }),
        ...(version === undefined ? {} : { version }),
      });
      const { forkedFrom } = await handle.describe();
      const answer = { workflowId: handle.workflowId, run: handle.run!, forkedFrom: forkedFrom ?? null };
      return print(
        context,
        answer,
        () =>
          `Forked ${forkedFrom?.id ?? positionals[0]} run ${forkedFrom?.run ?? '?'} from #${forkedFrom?.position ?? '?'} into ${handle.workflowId} (run ${handle.run}).`,
      );
    },
  },
  replay: {
    args: [],
    summary:
      "Check that the definitions still replay recorded histories — a store's workflows, or files — as a handoff would (exit 1 if one diverges).",
    options: {
      file: { type: 'string', multiple: true },
      id: { type: 'string', multiple: true },
      status: { type: 'string' },
      type: { type: 'string' },
      'created-since': { type: 'string' },
      limit: { type: 'string' },
      ...definitionOptions,
    },
    storeless: (values) => values.file !== undefined,
    help: [
      ...definitionHelp('the workflows to check (the new code)'),
      '--file FILE          a history file (repeatable): engine.history(id) as JSON, an array of them, or a',
      '                     studio export; without --file, histories are read from the store',
      '--id ID              only this workflow (repeatable)',
      '--status S[,S…]      only these statuses (default running,suspended: the runs that will replay)',
      '--type NAME          only this workflow type',
      '--created-since T    only workflows created at or after T (2h, 7d, or an ISO time)',
      '--limit N            check at most N workflows (default 1000)',
      '',
      'Exit 0: every history replays. 1: one diverged (where, and what, is printed), or its version is not in',
      "the definitions. Histories of types the definitions do not name are skipped (another service's).",
    ],
    async run(context) {
      const definitions = context.engine.definitions();
      if (definitions.length === 0)
        throw new StartupError(
          'shuttle workflow replay checks code against histories: give the definitions with --workflows PATH (as the workers are given them) or --demos.',
        );
      const files = context.values.file as string[] | undefined;
      const histories = files ? files.flatMap(historiesOfFile) : await storeHistories(context);
      const types = new Set(definitions.map((definition) => definition.name));
      const reports: ReplayReport[] = [];
      let skipped = 0;
      for (const history of histories)
        if (types.has(history.workflowType)) reports.push(replay(definitions, history));
        else skipped++;
      const failed = reports.filter((report) => !report.ok);
      const summary = `Replayed ${reports.length} histor${reports.length === 1 ? 'y' : 'ies'}: ${reports.length - failed.length} clean, ${failed.length} diverged${skipped > 0 ? `; ${skipped} skipped (type not in the definitions)` : ''}.`;
      await print(
        context,
        {
          checked: reports.length,
          clean: reports.length - failed.length,
          diverged: failed.length,
          skipped,
          reports,
        },
        () =>
          failed.length === 0
            ? summary
            : `${table(
                ['WORKFLOW', 'RUN', 'TYPE', 'VERSION', 'AT', 'WHAT'],
                failed.map((report) => [
                  report.workflowId,
                  String(report.run),
                  report.workflowType,
                  String(report.version),
                  report.ok || report.position === undefined ? '—' : `#${report.position}`,
                  report.ok
                    ? ''
                    : report.recorded !== undefined
                      ? `recorded ${report.recorded}; the code now yields ${report.replayed}`
                      : report.error.message,
                ]),
              )}\n\n${summary}`,
      );
      return failed.length > 0 ? exitCodes.replayDiverged : exitCodes.ok;
    },
  },
  suspend: {
    args: ['id'],
    summary: 'Pause a workflow: it runs nothing until resumed.',
    options: {},
    help: [],
    async run(context) {
      const id = context.positionals[0]!;
      await context.engine.suspend(id);
      return print(context, { workflowId: id, status: 'suspended' }, () => `Suspended ${id}.`);
    },
  },
  resume: {
    args: ['id'],
    summary: 'Resume a suspended workflow.',
    options: {},
    help: [],
    async run(context) {
      const id = context.positionals[0]!;
      await context.engine.resume(id);
      return print(context, { workflowId: id, resumed: true }, () => `Resumed ${id}.`);
    },
  },
  purge: {
    args: ['id'],
    summary: 'Delete a finished workflow: every run, or one earlier run (needs --yes).',
    options: { run: { type: 'string' }, yes: { type: 'boolean' } },
    help: ['--run N              only this earlier run', '--yes                really delete it'],
    async run(context) {
      const id = context.positionals[0]!;
      const run = runOf(context.values);
      confirm(context.values, `deletes ${run ? `run ${run} of ` : 'every run of '}workflow '${id}'`);
      const report = await context.engine.purge(id, run ? { run } : {});
      return print(context, report, () => `Purged ${id}: ${JSON.stringify(report)}.`);
    },
  },
};

/** A flag a command cannot do without, or a StartupError naming it. */
function requiredFlag(values: Context['values'], name: string, example: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '')
    throw new StartupError(`--${name} is required, e.g. --${name} ${example}.`);
  return value;
}

const scheduleCommands: Record<string, Subcommand> = {
  create: {
    args: ['name'],
    summary: 'Create a schedule: a cron that starts a workflow (no change if it exists with this spec).',
    options: {
      cron: { type: 'string' },
      workflow: { type: 'string' },
      timezone: { type: 'string' },
      input: { type: 'string' },
      'input-file': { type: 'string' },
      overlap: { type: 'string' },
      'catch-up': { type: 'string' },
      'start-delay': { type: 'string' },
      'execution-timeout': { type: 'string' },
      replace: { type: 'boolean' },
      ...definitionOptions,
    },
    help: [
      ...definitionHelp('its workflow'),
      "--cron EXPR          when it fires: 5 fields, or 6 with seconds (quote it: '0 9 * * 1-5')",
      '--workflow TYPE      the workflow type it starts (the workers must have its definition)',
      '--timezone ZONE      the IANA time zone the cron is read in (default UTC)',
      '--input JSON         the input of every workflow it starts',
      '--input-file FILE    the input, from a JSON file',
      '--overlap P          a slot due while its last run still runs: skip (default), buffer-one, allow',
      '--catch-up P         slots missed while no engine ran: latest (default), none, all',
      '--start-delay D      start each workflow this long after its slot',
      '--execution-timeout D  time each workflow out this long after it started',
      '--replace            replace the spec of an existing schedule of this name',
    ],
    async run(context) {
      const { engine, positionals, values } = context;
      const cron = requiredFlag(values, 'cron', "'0 9 * * *'");
      const workflow = requiredFlag(values, 'workflow', 'nightly-report');
      const input = inputOf(values);
      const startDelayMs = durationFlag('start-delay', values['start-delay'] as string | undefined);
      const executionTimeoutMs = durationFlag(
        'execution-timeout',
        values['execution-timeout'] as string | undefined,
      );
      const schedule = await engine.schedule(
        positionals[0]!,
        {
          cron,
          workflow,
          ...(values.timezone ? { timezone: values.timezone as string } : {}),
          ...(input !== undefined ? { input } : {}),
          ...(values.overlap ? { overlap: values.overlap as ScheduleInfo['spec']['overlap'] } : {}),
          ...(values['catch-up'] ? { catchUp: values['catch-up'] as ScheduleInfo['spec']['catchUp'] } : {}),
          ...(startDelayMs || executionTimeoutMs
            ? {
                startOptions: {
                  ...(startDelayMs ? { startDelayMs } : {}),
                  ...(executionTimeoutMs ? { executionTimeoutMs } : {}),
                },
              }
            : {}),
        },
        values.replace === true ? { replace: true } : {},
      );
      return print(
        context,
        schedule,
        () =>
          `Schedule '${schedule.name}': ${schedule.spec.cron} (${schedule.spec.timezone}) starts ${schedule.spec.workflow}; next ${time(schedule.nextFireAt[0])}.`,
      );
    },
  },
  list: {
    args: [],
    summary: 'List schedules.',
    options: {},
    help: [],
    async run(context) {
      const schedules = await context.engine.schedules();
      return print(context, schedules, () =>
        schedules.length === 0
          ? 'No schedules.'
          : table(
              ['NAME', 'CRON', 'TIME ZONE', 'WORKFLOW', 'STATE', 'NEXT', 'RUNNING'],
              scheduleRows(schedules),
            ),
      );
    },
  },
  describe: {
    args: ['name'],
    summary: "A schedule's spec, next fire times and last slots.",
    options: {},
    help: [],
    async run(context) {
      const schedule = await context.engine.describeSchedule(context.positionals[0]!);
      return print(context, schedule, () => scheduleText(schedule));
    },
  },
  pause: {
    args: ['name'],
    summary: 'Pause a schedule: no slot fires until it is resumed.',
    options: {},
    help: [],
    async run(context) {
      const schedule = await context.engine.pauseSchedule(context.positionals[0]!);
      return print(context, schedule, () => `Paused schedule '${schedule.name}'.`);
    },
  },
  resume: {
    args: ['name'],
    summary: 'Resume a paused schedule (its catch-up policy says what happens to missed slots).',
    options: {},
    help: [],
    async run(context) {
      const schedule = await context.engine.resumeSchedule(context.positionals[0]!);
      return print(
        context,
        schedule,
        () => `Resumed schedule '${schedule.name}'; next ${time(schedule.nextFireAt[0])}.`,
      );
    },
  },
  trigger: {
    args: ['name'],
    summary: "Start the schedule's workflow now (its overlap policy applies).",
    options: { ...definitionOptions },
    help: definitionHelp('its workflow'),
    async run(context) {
      const handle = await context.engine.triggerSchedule(context.positionals[0]!);
      return print(
        context,
        { workflowId: handle.workflowId, run: handle.run ?? null },
        () => `Triggered: started ${handle.workflowId}.`,
      );
    },
  },
  delete: {
    args: ['name'],
    summary: 'Delete a schedule (the workflows it started go on; needs --yes).',
    options: { yes: { type: 'boolean' } },
    help: ['--yes                really delete it'],
    async run(context) {
      const name = context.positionals[0]!;
      confirm(context.values, `deletes schedule '${name}'`);
      await context.engine.deleteSchedule(name);
      return print(context, { name, deleted: true }, () => `Deleted schedule '${name}'.`);
    },
  },
};

/** A period as people say it: `1s`, `1m`, `90s`, `1h`, `2d`, or the duration's own words. */
function period(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return duration(ms);
}

/** A queue's limits, in words: `concurrency 10, per key 1, per engine 4, rate 100/1m`, or `none`. */
function limitsText(queue: QueueView): string {
  const limits = [
    ...(queue.concurrency === null ? [] : [`concurrency ${queue.concurrency}`]),
    ...(queue.perKeyConcurrency === null ? [] : [`per key ${queue.perKeyConcurrency}`]),
    ...(queue.perEngineConcurrency === null ? [] : [`per engine ${queue.perEngineConcurrency}`]),
    ...(queue.rateLimit === null
      ? []
      : [`rate ${queue.rateLimit.limit}/${period(queue.rateLimit.periodMs)}`]),
  ];
  return limits.join(', ') || 'none';
}

/** Running of the limit (`3/10`); `-` for a queue without a `concurrency` limit (it counts no slots). */
function runningText(queue: QueueView): string {
  return queue.running === null ? '-' : `${queue.running}/${queue.concurrency}`;
}

function waitingText(queue: QueueView): string {
  return queue.waitingCapped ? `${queue.waiting}+` : String(queue.waiting);
}

function oldestWaitText(queue: QueueView, now: number): string {
  return queue.oldestEnqueuedAt === null ? '-' : duration(now - queue.oldestEnqueuedAt);
}

/** Admissions used in the rate window of a rate-limited queue (`37/100 per 1m`), else `-`. */
function rateText(queue: QueueView): string {
  if (!queue.rateLimit || !queue.rate) return '-';
  return `${queue.rate.usedInWindow}/${queue.rateLimit.limit} per ${period(queue.rateLimit.periodMs)}`;
}

function queueRows(queues: readonly QueueView[], now: number): string[][] {
  return queues.map((queue) => [
    queue.name,
    limitsText(queue),
    runningText(queue),
    waitingText(queue),
    oldestWaitText(queue, now),
    rateText(queue),
  ]);
}

function queueText(queue: QueueView, labels: Map<string, string>, now: number): string {
  const sections = [
    fields([
      ['Queue', queue.name],
      ['Limits', limitsText(queue)],
      ['Priority step', `${period(queue.priorityStepMs)} (a priority level is worth this much waiting)`],
      [
        'Running',
        queue.running === null
          ? 'no concurrency limit (no slots are counted)'
          : `${queue.running} of ${queue.concurrency}`,
      ],
      [
        'Waiting',
        `${waitingText(queue)}${queue.oldestEnqueuedAt === null ? '' : `; the next to be admitted has waited ${oldestWaitText(queue, now)}`}`,
      ],
      ...(queue.rateLimit && queue.rate
        ? ([
            [
              'Rate',
              `${queue.rate.usedInWindow} of ${queue.rateLimit.limit} admissions used in the last ${period(queue.rateLimit.periodMs)}${queue.rate.nextFreeAt === null ? '' : `; the next is free at ${time(queue.rate.nextFreeAt)}`}`,
            ],
          ] as [string, string][])
        : []),
    ]),
  ];
  if (queue.slots.length > 0)
    sections.push(
      `Slot holders:\n${table(
        ['SLOT', 'WORKFLOW', 'SINCE', 'ADMITTED BY'],
        [...queue.slots]
          .sort((a, b) => a.slot - b.slot)
          .map((slot) => [
            String(slot.slot),
            slot.workflowId,
            `${duration(now - slot.since)} ago`,
            engineName(labels, slot.admittedBy),
          ]),
      )}`,
    );
  if (queue.next.length > 0)
    sections.push(
      `Next waiting, in admission order${queue.waiting > queue.next.length ? ` (the first ${queue.next.length} of ${waitingText(queue)})` : ''}:\n${table(
        ['#', 'WORKFLOW', 'TYPE', 'KEY', 'NOT BEFORE'],
        queue.next.map((entry, index) => [
          String(index + 1),
          entry.workflowId,
          entry.type,
          entry.key ?? '-',
          entry.notBefore !== undefined && entry.notBefore > now ? time(entry.notBefore) : '-',
        ]),
      )}`,
    );
  if (queue.keys.length > 0)
    sections.push(
      `By concurrency key${queue.perKeyConcurrency === null ? '' : ` (at most ${queue.perKeyConcurrency} running each)`}:\n${table(
        ['KEY', 'RUNNING', 'WAITING'],
        queue.keys.map((key) => [key.key, String(key.running), String(key.waiting)]),
      )}`,
    );
  return sections.join('\n\n');
}

const describeQueue: Subcommand = {
  args: ['name'],
  summary: "A queue's limits, the workflows holding its slots, the next waiting, and each key's counts.",
  options: {},
  help: [],
  async run(context) {
    const queue = await context.engine.describeQueue(context.positionals[0]!);
    return print(context, queue, async () => queueText(queue, await context.labels(), context.io.now()));
  },
};

/** At most this many slot holders are named in a row of the ACTIVITY LIMITS table (`+N more` after them). */
const holdersShown = 3;

/**
 * The ACTIVITY LIMITS table: each group's limits (`?` for a group this process does not declare: activity
 * limits are declared in code on the engines that run the activities, not stored), the attempts holding its
 * slots now (of its `concurrency` when known), and who holds them: `workflow@engine`, oldest first.
 */
export function activityLimitsTable(
  groups: readonly ActivityLimitView[],
  labels: Map<string, string>,
): string {
  const rows = groups.map((group) => {
    const names = group.running.map((slot) => `${slot.workflowId}@${engineName(labels, slot.engineId)}`);
    const holders =
      names.length > holdersShown
        ? `${names.slice(0, holdersShown).join(', ')} +${names.length - holdersShown} more`
        : names.join(', ') || '-';
    return [
      group.name,
      group.declared ? String(group.concurrency ?? '-') : '?',
      group.declared ? String(group.perEngine ?? '-') : '?',
      group.declared && group.concurrency !== null
        ? `${group.running.length}/${group.concurrency}`
        : String(group.running.length),
      holders,
    ];
  });
  const undeclared = groups.some((group) => !group.declared);
  return [
    `ACTIVITY LIMITS${undeclared ? ' (slots held in the store now; ? = limits declared in code on the engines that run them)' : ''}`,
    table(['GROUP', 'CONCURRENCY', 'PER ENGINE', 'RUNNING', 'HOLDERS'], rows),
  ].join('\n');
}

const activityLimitsCommand: Subcommand = {
  args: [],
  summary: 'The activity concurrency limits seen in the store: the attempts holding their slots now.',
  options: {},
  help: [
    'Activity limits are declared in code (createEngine({ activityLimits })) on the engines that run the',
    'activities and are not written to the store. This lists every group with a slot held now (a group with',
    '`concurrency` under workflow-lease keeps one `act-slot:` key per running attempt): its holders, each',
    'workflow and engine. Its limits are shown when this process declares the group, else `?`.',
  ],
  async run(context) {
    const groups = await context.activityLimits();
    return print(context, groups, async () =>
      groups.length === 0
        ? 'No activity slots held in the store now (activity limits are declared in code, not stored).'
        : activityLimitsTable(groups, await context.labels()),
    );
  },
};

const queueCommands: Record<string, Subcommand> = {
  list: {
    args: [],
    summary:
      'List the queues declared on the fleet (limits, running of the limit, waiting, rate used), then the activity slots held now.',
    options: {},
    help: [
      'A second table, ACTIVITY LIMITS, follows when any activity slot is held in the store now (see',
      "'shuttle queue activity-limits'). --json prints the queues only.",
    ],
    async run(context) {
      const queues = await context.engine.queues();
      return print(context, queues, async () => {
        const groups = await context.activityLimits();
        const queueTable =
          queues.length === 0
            ? 'No queues: declare one in a --workflows module (export const q = defineQueue(name, { concurrency: … })).'
            : table(
                ['NAME', 'LIMITS', 'RUNNING', 'WAITING', 'NEXT WAITED', 'RATE'],
                queueRows(queues, context.io.now()),
              );
        return groups.length === 0
          ? queueTable
          : `${queueTable}\n\n${activityLimitsTable(groups, await context.labels())}`;
      });
    },
  },
  describe: describeQueue,
  show: { ...describeQueue, summary: 'The same as describe.' },
  'activity-limits': activityLimitsCommand,
};

/** The operator command groups, by the word after `shuttle`. */
export const operatorGroups = {
  workflow: workflowCommands,
  schedule: scheduleCommands,
  queue: queueCommands,
} as const;

export type OperatorGroup = keyof typeof operatorGroups;

export function isOperatorGroup(word: string | undefined): word is OperatorGroup {
  return word === 'workflow' || word === 'schedule' || word === 'queue';
}

function subcommandUsage(group: OperatorGroup, name: string, command: Subcommand): string {
  const args = command.args.map((arg) => `<${arg}>`).join(' ');
  const options = { ...command.options, ...storeOptions };
  const lines = [...command.help, ...storeHelp];
  return [
    `shuttle ${group} ${name}${args ? ` ${args}` : ''}${Object.keys(options).length ? ' [options]' : ''}: ${command.summary}`,
    '',
    ...lines.map((line) => `  ${line}`),
  ].join('\n');
}

/** `shuttle workflow` / `schedule` / `queue` alone or with --help: its commands, one line each. */
export function groupUsage(group: OperatorGroup): string {
  const commands = operatorGroups[group];
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    `shuttle ${group} <command> [options]`,
    '',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    `Run 'shuttle ${group} <command> --help' for its options. Exit codes: 0 done, 1 the workflow did not complete, 2 bad command line or input, 3 not found, 4 refused in its current state, 5 gave up waiting.`,
  ].join('\n');
}

/** The exit code for an error the engine threw (see the module comment; classes in ../outcomes.ts). */
export function exitCodeOf(error: unknown): number {
  switch (classifyError(error)) {
    case 'not-found':
      return exitCodes.notFound;
    case 'conflict':
    case 'refused':
      return exitCodes.refused;
    case 'timed-out':
      return exitCodes.timedOut;
    default:
      return exitCodes.usage;
  }
}

/**
 * Runs `shuttle <group> <argv…>` and returns its exit code; never throws. Every problem is one line on
 * stderr; nothing is written before the command line and the input have been checked.
 */
export async function runOperator(
  group: OperatorGroup,
  argv: readonly string[],
  io: OperatorIo,
): Promise<number> {
  const [name, ...rest] = argv;
  const commands = operatorGroups[group];
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(`${groupUsage(group)}\n`);
    return name === undefined ? exitCodes.usage : exitCodes.ok;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    io.stderr(
      `Unknown command 'shuttle ${group} ${name}'. Commands: ${Object.keys(commands).join(', ')}; 'shuttle ${group} --help' says more.\n`,
    );
    return exitCodes.usage;
  }
  let opened: Awaited<ReturnType<OperatorIo['open']>> | null = null;
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: [...rest],
        options: { ...command.options, ...storeOptions },
        strict: true,
        allowPositionals: true,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message.replace(/\. To specify.*$/s, '') : String(error);
      throw new StartupError(
        `shuttle ${group} ${name}: ${message}. Run 'shuttle ${group} ${name} --help' for the options.`,
      );
    }
    const values = parsed.values as Context['values'];
    if (values.help) {
      io.stdout(`${subcommandUsage(group, name, command)}\n`);
      return exitCodes.ok;
    }
    if (parsed.positionals.length !== command.args.length) {
      const expected = command.args.map((arg) => `<${arg}>`).join(' ') || 'no arguments';
      throw new StartupError(
        `shuttle ${group} ${name} takes ${expected}; got ${parsed.positionals.length === 0 ? 'none' : parsed.positionals.map((arg) => `'${arg}'`).join(' ')}.`,
      );
    }
    checkFlags(values);
    const databaseUrl =
      (values['database-url'] as string | undefined) ?? process.env.SHUTTLE_DATABASE_URL ?? undefined;
    opened = await io.open({
      ...(command.storeless?.(values) ? { memory: true } : {}),
      ...(databaseUrl ? { databaseUrl } : {}),
      ...(values['data-dir'] ? { dataDir: values['data-dir'] as string } : {}),
      ...(values.schema ? { schema: values.schema as string } : {}),
      ...(values.codec ? { codec: values.codec as string } : {}),
      workflows: (values.workflows as string[] | undefined) ?? [],
      demos: values.demos === true,
    });
    let labels: Promise<Map<string, string>> | null = null;
    const context: Context = {
      engine: opened.engine,
      values,
      positionals: parsed.positionals,
      io,
      json: values.json === true,
      labels: () => (labels ??= opened!.labels().catch(() => new Map())),
      activityLimits: async () =>
        opened!.activityLimits
          ? opened!.activityLimits()
          : (await opened!.engine.activityLimits()).map((info) => ({ ...info, declared: true })),
    };
    return await command.run(context);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const prefix = error instanceof StartupError ? '' : `${error instanceof Error ? error.name : 'Error'}: `;
    const hint =
      error instanceof Error && error.name === 'WorkflowNotRegisteredError'
        ? ' Here: give the file that defines it with --workflows PATH, as the workers are given it.'
        : error instanceof Error && error.name === 'QueueNotFoundError'
          ? " 'shuttle queue list' lists the queues of this store."
          : error instanceof Error && /^Queue '.*' is not declared on this engine/.test(error.message)
            ? ' Here: give the module that declares it (export const … = defineQueue(…)) with --workflows, as the workers are given it.'
            : '';
    io.stderr(`${prefix}${message.split('\n')[0]}${hint}\n`);
    return exitCodeOf(error);
  } finally {
    await opened?.close().catch(() => undefined);
  }
}
