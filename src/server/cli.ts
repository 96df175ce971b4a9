/**
 * The `shuttle` command (bin/shuttle.mjs runs it):
 *
 *   shuttle worker   run an engine in this process (the workflows of your definition files, or the demos)
 *   shuttle serve    serve the studio for a store, over HTTP and a WebSocket, to this machine only by default
 *   shuttle dev      a local fleet: PostgreSQL, three workers and the studio, stopped together with Ctrl-C
 *   shuttle workflow …, shuttle schedule …, shuttle queue …   the operator's commands (operator/operator.ts);
 *   shuttle replay …  is shuttle workflow replay …
 *
 * Every problem with the command line, the database or a definition file is one readable line on stderr and
 * a non-zero exit (2), before anything is written. `shuttle help [command]`, or `--help` / `-h` after a
 * command, lists the options.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { hostClaimTimings } from '../protocol';
import { durationFlag, integerFlag } from './flags';
import { groupUsage, isOperatorGroup, runOperator } from './operator/operator';
import { StartupError } from './store';

export { durationFlag, integerFlag };

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

const storeOptions = {
  'database-url': { type: 'string' },
  'data-dir': { type: 'string' },
  schema: { type: 'string' },
} as const satisfies OptionSpec;

const definitionOptions = {
  workflows: { type: 'string', multiple: true },
  demos: { type: 'boolean' },
} as const satisfies OptionSpec;

const commands = {
  worker: {
    summary: 'Run an engine in this process, sharing a store with every other engine on it.',
    options: {
      ...storeOptions,
      ...definitionOptions,
      label: { type: 'string' },
      'metrics-port': { type: 'string' },
      'claim-ttl-ms': { type: 'string' },
      'renew-interval-ms': { type: 'string' },
      'load-studio-definitions': { type: 'boolean' },
      retention: { type: 'string' },
      codec: { type: 'string' },
    },
    help: [
      '--database-url URL          PostgreSQL database shared by every engine (default: $SHUTTLE_DATABASE_URL;',
      '                            without one, an embedded store in --data-dir, for this one process)',
      '--data-dir DIR              folder of the embedded store (default .shuttle/db)',
      '--schema NAME               PostgreSQL schema of the store (default shuttle)',
      '--workflows PATH            a definition file or folder (repeatable): its workflows, and the queues it',
      '                            exports (defineQueue); default: the built-in demos',
      '--demos                     run the built-in demos too',
      '--label NAME                this process in the studio (default worker-<n>)',
      '--metrics-port N            serve Prometheus /metrics and /healthz on 127.0.0.1:N',
      `--claim-ttl-ms N            how long a silent process keeps its workflows (default ${hostClaimTimings.ttlMs})`,
      `--renew-interval-ms N       how often the process renews its session (default ${hostClaimTimings.renewIntervalMs})`,
      '--load-studio-definitions   also run definitions saved in the studio (off: the browser cannot make a',
      '                            server run code)',
      '--retention DURATION        purge finished workflows this long after they end (30d, 12h, 90m, 45s,',
      '                            500ms), unless their definition sets its own retentionMs (default: keep)',
      '--codec MODULE              the payload codec (e.g. encryption) of an encoded store: a module exporting',
      '                            `codec` = { name, encode, decode } (docs/engine.md, Payload codec)',
    ],
  },
  serve: {
    summary: 'Serve the studio for a store (127.0.0.1 only unless --host says otherwise).',
    options: {
      ...storeOptions,
      ...definitionOptions,
      host: { type: 'string' },
      port: { type: 'string' },
      engines: { type: 'string' },
      codec: { type: 'string' },
    },
    help: [
      '--database-url URL   PostgreSQL database the workers share (default: $SHUTTLE_DATABASE_URL)',
      '--schema NAME        PostgreSQL schema of the store (default shuttle)',
      '--workflows PATH     the definition files the workers run (the studio needs them to start, query and',
      '                     update workflows); default: the built-in demos',
      '--host ADDRESS       address to listen on (default 127.0.0.1)',
      '--port N             port to listen on (default 7300; 0 picks a free one)',
      '--engines N          also run N engines in this process (default 0: the studio only observes)',
      '--codec MODULE       the payload codec of an encoded store (a module exporting `codec`)',
      '',
      'It also serves the HTTP API under /api/v1 (OpenAPI at /api/v1/openapi.json). Studio and API share one',
      'token: a random one, printed, unless $SHUTTLE_TOKEN (at least 16 characters) sets it.',
    ],
  },
  dev: {
    summary: 'A fleet on your laptop: PostgreSQL, three workers running the demos, and the studio.',
    options: {
      'database-url': { type: 'string' },
      workers: { type: 'string' },
      port: { type: 'string' },
      ...definitionOptions,
    },
    help: [
      '--database-url URL   use this PostgreSQL database instead of starting a throwaway server',
      '--workers N          how many worker processes (default 3)',
      '--port N             the studio port (default 7300; 0 picks a free one)',
      '--workflows PATH     definition files the workers run (default: the built-in demos)',
      '--demos              run the built-in demos too',
    ],
  },
} as const;

type CommandName = keyof typeof commands;

function usage(command?: CommandName): string {
  if (command) {
    const spec = commands[command];
    return [`shuttle ${command}: ${spec.summary}`, '', ...spec.help.map((line) => `  ${line}`)].join('\n');
  }
  return [
    'shuttle <command> [options]',
    '',
    ...Object.entries(commands).map(([name, spec]) => `  ${name.padEnd(8)} ${spec.summary}`),
    `  ${'workflow'.padEnd(8)} Operate on workflows: list, describe, timeline, result, start, signal, query, update,`,
    `  ${''.padEnd(8)} cancel, terminate, suspend, resume, fork, replay, purge.`,
    `  ${'replay'.padEnd(8)} Check that your definitions still replay recorded histories (= shuttle workflow replay).`,
    `  ${'schedule'.padEnd(8)} Operate on schedules: list, describe, pause, resume, trigger, delete.`,
    `  ${'queue'.padEnd(8)} Look at workflow queues: list, describe (limits, slot holders, who waits next).`,
    '',
    "Run 'shuttle help <command>' or 'shuttle <command> --help' for its options.",
  ].join('\n');
}

function parse<C extends CommandName>(command: C, args: string[]) {
  try {
    return parseArgs({ args, options: commands[command].options, strict: true, allowPositionals: false })
      .values as Record<string, string | string[] | boolean | undefined>;
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/\. To specify.*$/s, '') : String(error);
    throw new StartupError(`shuttle ${command}: ${message}. Run 'shuttle help ${command}' for the options.`);
  }
}

/** `--codec MODULE` (codec-module.ts), loaded only when given: `shuttle --help` loads no engine. */
async function loadCodec(path: string) {
  const { loadCodecModule } = await import('./codec-module');
  return loadCodecModule(path);
}

function databaseUrlOf(values: Record<string, unknown>): string | undefined {
  return (values['database-url'] as string | undefined) ?? process.env.SHUTTLE_DATABASE_URL ?? undefined;
}

/** Exits on the first signal after `stop`, at once on the second. */
function stopOnSignals(stop: () => Promise<unknown>): void {
  let received = 0;
  const onSignal = () => {
    received++;
    if (received > 1) process.exit(130);
    void stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function runWorker(args: string[]): Promise<void> {
  const values = parse('worker', args);
  const { startWorker } = await import('./worker');
  const databaseUrl = databaseUrlOf(values);
  const worker = await startWorker({
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] as string } : {}),
    ...(values.schema ? { schema: values.schema as string } : {}),
    workflows: (values.workflows as string[] | undefined) ?? [],
    demos: values.demos === true,
    ...(values.label ? { label: values.label as string } : {}),
    ...(values['metrics-port'] !== undefined
      ? { metricsPort: integerFlag('metrics-port', values['metrics-port'] as string, 0) }
      : {}),
    ...(values['claim-ttl-ms'] !== undefined
      ? { claimTtlMs: integerFlag('claim-ttl-ms', values['claim-ttl-ms'] as string, 1) }
      : {}),
    ...(values['renew-interval-ms'] !== undefined
      ? { renewIntervalMs: integerFlag('renew-interval-ms', values['renew-interval-ms'] as string, 1) }
      : {}),
    ...(values.retention !== undefined
      ? { retentionMs: durationFlag('retention', values.retention as string) }
      : {}),
    loadStudioDefinitions: values['load-studio-definitions'] === true,
    ...(values.codec ? { codec: await loadCodec(values.codec as string) } : {}),
  });
  stopOnSignals(() => worker.stop());
}

async function runServe(args: string[]): Promise<void> {
  const values = parse('serve', args);
  const { startServer } = await import('./serve');
  const databaseUrl = databaseUrlOf(values);
  const server = await startServer({
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] as string } : {}),
    ...(values.schema ? { schema: values.schema as string } : {}),
    workflows: (values.workflows as string[] | undefined) ?? [],
    demos: values.demos === true,
    ...(values.host ? { host: values.host as string } : {}),
    ...(values.port !== undefined ? { port: integerFlag('port', values.port as string, 0) } : {}),
    ...(values.engines !== undefined ? { engines: integerFlag('engines', values.engines as string, 0) } : {}),
    ...(process.env.SHUTTLE_TOKEN ? { token: process.env.SHUTTLE_TOKEN } : {}),
    ...(values.codec ? { codec: await loadCodec(values.codec as string) } : {}),
  });
  process.stderr.write(
    `\nShuttle studio for ${server.storeLabel}:\n\n  ${server.url}\n\nHTTP API (send Authorization: Bearer ${server.token}):\n\n  ${server.apiUrl}   (OpenAPI: ${server.apiUrl}/openapi.json)\n\n`,
  );
  stopOnSignals(() => server.stop());
}

async function runDev(args: string[]): Promise<void> {
  const values = parse('dev', args);
  const { startFleet } = await import('./fleet');
  const databaseUrl = values['database-url'] as string | undefined;
  const fleet = await startFleet({
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(values.workers !== undefined ? { workers: integerFlag('workers', values.workers as string, 1) } : {}),
    ...(values.port !== undefined ? { port: integerFlag('port', values.port as string, 0) } : {}),
    workflows: (values.workflows as string[] | undefined) ?? [],
    demos: values.demos === true,
    output: (line) => process.stderr.write(`${line}\n`),
  });
  process.stderr.write(
    `\nA Shuttle fleet is running: ${fleet.workers.length} workers on ${fleet.storeLabel}.\nOpen the studio:\n\n  ${fleet.url}\n\nCtrl-C stops everything.\n\n`,
  );
  stopOnSignals(() => fleet.stop());
}

/**
 * A problem as the one line the command prints. A message listing several problems (a header line, then one
 * line per problem, as a broken definition file gives) becomes the header, the first problem (its
 * `file:line:column` and what is wrong) and how many more there are.
 */
export function oneLine(message: string): string {
  const [header = '', ...problems] = message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const [first] = problems;
  if (first === undefined) return header;
  const more = problems.length - 1;
  return `${header.replace(/:$/, '')}: ${first}${more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'})` : ''}`;
}

/** Runs the command line `argv` (without node and the script); never throws. */
export async function main(argv: readonly string[]): Promise<void> {
  // `shuttle replay …` is `shuttle workflow replay …`, the command a CI job runs.
  const [command, ...args] = argv[0] === 'replay' ? ['workflow', 'replay', ...argv.slice(1)] : argv;
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      const topic = args[0] as CommandName | undefined;
      if (isOperatorGroup(topic)) {
        process.stdout.write(`${groupUsage(topic)}\n`);
        return;
      }
      process.stdout.write(`${usage(topic && topic in commands ? topic : undefined)}\n`);
      return;
    }
    if (isOperatorGroup(command)) {
      const { openForOperator } = await import('./operator/open');
      const stop = new AbortController();
      process.on('SIGINT', () => stop.abort());
      process.on('SIGTERM', () => stop.abort());
      const code = await runOperator(command, args, {
        signal: stop.signal,
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        open: openForOperator,
        now: () => Date.now(),
      });
      // Exit once stdout has drained (a pipe is written asynchronously), whatever timers the store left.
      process.stdout.write('', () => process.exit(code));
      return;
    }
    if (command in commands && (args.includes('--help') || args.includes('-h'))) {
      process.stdout.write(`${usage(command as CommandName)}\n`);
      return;
    }
    if (command === 'worker') return await runWorker(args);
    if (command === 'serve') return await runServe(args);
    if (command === 'dev') return await runDev(args);
    throw new StartupError(
      `Unknown command '${command}'. Commands: worker, serve, dev, workflow, schedule, queue; 'shuttle help' says more.`,
    );
  } catch (error) {
    const message =
      error instanceof StartupError
        ? error.message
        : `shuttle ${command ?? ''} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
    process.stderr.write(`${oneLine(message)}\n`);
    process.exit(2);
  }
}
