/**
 * The bench page (bench.html): starts a bench worker per call and offers `window.shuttleBench.run(options)`,
 * which the Node runner (bench/browser.ts) calls through Playwright, and `shuttleBench.profile(options)`,
 * which bench/browser/profile.ts calls. Progress is shown on the page and logged to the console, which the
 * runners forward to their own output. One call at a time.
 */
import type {
  BenchReply,
  BenchRequest,
  EngineSample,
  LongLivedReply,
  LongLivedRequest,
  ProfileOptions,
  QueuesReply,
  QueuesRequest,
  ThroughputOptions,
  ThroughputResult,
} from './protocol';

const status = document.querySelector<HTMLElement>('[data-testid="bench-status"]');
const log = document.querySelector<HTMLElement>('[data-testid="bench-log"]');

function show(message: string): void {
  if (status) status.textContent = message;
  if (log) log.textContent += `${message}\n`;
  console.info(`[shuttle bench] ${message}`);
}

let running: Promise<unknown> | null = null;

/** Sends `request` to a fresh bench worker and resolves with what `settle` makes of its final reply. */
function call<T>(request: BenchRequest, settle: (reply: BenchReply) => T | undefined): Promise<T> {
  if (running) return Promise.reject(new Error('A bench run is already in progress on this page.'));
  const worker = new Worker(new URL('./bench.worker.ts', import.meta.url), {
    type: 'module',
    name: 'shuttle bench',
  });
  const done = new Promise<T>((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent<BenchReply>) => {
      const reply = event.data;
      if (reply.kind === 'progress') show(reply.message);
      else if (reply.kind === 'failed') {
        show(`failed: ${reply.error.name}: ${reply.error.message}`);
        reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
      } else {
        show('done');
        const value = settle(reply);
        if (value === undefined) reject(new Error(`unexpected reply '${reply.kind}' from the bench worker`));
        else resolve(value);
      }
    });
    worker.addEventListener('error', (event) => {
      show(`the bench worker crashed: ${event.message}`);
      reject(new Error(`The bench worker crashed: ${event.message}`));
    });
    worker.postMessage(request);
  }).finally(() => {
    worker.terminate();
    running = null;
  });
  running = done;
  return done;
}

function run(options: ThroughputOptions): Promise<ThroughputResult> {
  return call({ kind: 'run', options }, (reply) => (reply.kind === 'done' ? reply.result : undefined));
}

function profile(options: ProfileOptions): Promise<EngineSample[]> {
  return call({ kind: 'profile', options }, (reply) =>
    reply.kind === 'profiled' ? reply.samples : undefined,
  );
}

/**
 * A tab's request/reply worker, started on first use by `create` (written out at each call site, as Vite
 * finds workers by their literal `new Worker(new URL(…))`): one request at a time, each answered by one reply.
 */
function requestWorker<Request, Reply extends { kind: string }>(name: string, create: () => Worker) {
  let worker: Worker | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  return (request: Request): Promise<Reply> => {
    const target = (worker ??= create());
    const answer = queue.then(
      () =>
        new Promise<Reply>((resolve, reject) => {
          const onMessage = (event: MessageEvent<Reply>) => {
            target.removeEventListener('message', onMessage);
            target.removeEventListener('error', onError);
            const reply = event.data;
            if (reply.kind === 'failed') {
              const { error } = reply as unknown as { error: { name: string; message: string } };
              reject(Object.assign(new Error(error.message), { name: error.name }));
            } else resolve(reply);
          };
          const onError = (event: ErrorEvent) => {
            target.removeEventListener('message', onMessage);
            target.removeEventListener('error', onError);
            reject(new Error(`The ${name} worker crashed: ${event.message}`));
          };
          target.addEventListener('message', onMessage);
          target.addEventListener('error', onError);
          target.postMessage(request);
        }),
    );
    queue = answer.catch(() => undefined);
    return answer;
  };
}

/** One request to this tab's long-lived worker, after the ones before it (bench/browser/long-lived.worker.ts). */
const longLived = requestWorker<LongLivedRequest, LongLivedReply>(
  'long-lived bench',
  () =>
    new Worker(new URL('./long-lived.worker.ts', import.meta.url), {
      type: 'module',
      name: 'shuttle bench long-lived',
    }),
);

/** One request to this tab's queues worker, after the ones before it (bench/browser/queues.worker.ts). */
const queues = requestWorker<QueuesRequest, QueuesReply>(
  'queues bench',
  () =>
    new Worker(new URL('./queues.worker.ts', import.meta.url), {
      type: 'module',
      name: 'shuttle bench queues',
    }),
);

window.shuttleBench = { run, profile, longLived, queues };
show('ready');
