/**
 * The operator's commands: `shuttle workflow …` and `shuttle schedule …`, for a person on call or a script.
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
 *   3  no such workflow, run or schedule
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
  replay,
  type AttributeInput,
  type RecordedHistory,
  type ReplayReport,
} from '../../engine';
import { parseArgs } from 'node:util';
import type {
  Engine,
  ListFilter,
  ScheduleInfo,
  TimelineEntry,
  WorkflowDescription,
  WorkflowStatus,
  WorkflowSummary,
} from '../../engine';
import { isWorkflowStatus, workflowStatuses } from '../../engine/vocabulary';
import { durationFlag, integerFlag, timeFlag } from '../flags';
import { classifyError } from '../outcomes';
import { StartupError } from '../store';
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
  open(
    flags: StoreFlags,
  ): Promise<{ engine: Engine; labels(): Promise<Map<string, string>>; close(): Promise<void> }>;
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

function describeText(description: WorkflowDescription, labels: Map<string, string>, now: number): string {
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
      return print(context, description, async () =>
        describeText(description, await context.labels(), context.io.now()),
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
    ],
    async run(context) {
      const { engine, positionals, values } = context;
      const input = inputOf(values);
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
        ...(values.attribute
          ? {
              attributes: attributesFromText(
                engine.definitions().find((definition) => definition.name === positionals[0])?.attributes,
                values.attribute as string[],
              ) as Record<string, AttributeInput>,
            }
          : {}),
      });
      const answer = { workflowId: handle.workflowId, run: handle.run ?? null, started: handle.started };
      return print(context, answer, () =>
        handle.started
          ? `Started ${handle.workflowId} (run ${handle.run ?? 1}).`
          : `Not started: the idempotency key already started ${handle.workflowId} (run ${handle.run ?? 1}).`,
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

/** The operator command groups, by the word after `shuttle`. */
export const operatorGroups = { workflow: workflowCommands, schedule: scheduleCommands } as const;

export type OperatorGroup = keyof typeof operatorGroups;

export function isOperatorGroup(word: string | undefined): word is OperatorGroup {
  return word === 'workflow' || word === 'schedule';
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

/** `shuttle workflow` / `shuttle schedule` alone or with --help: its commands, one line each. */
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
    };
    return await command.run(context);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const prefix = error instanceof StartupError ? '' : `${error instanceof Error ? error.name : 'Error'}: `;
    const hint =
      error instanceof Error && error.name === 'WorkflowNotRegisteredError'
        ? ' Here: give the file that defines it with --workflows PATH, as the workers are given it.'
        : '';
    io.stderr(`${prefix}${message.split('\n')[0]}${hint}\n`);
    return exitCodeOf(error);
  } finally {
    await opened?.close().catch(() => undefined);
  }
}
