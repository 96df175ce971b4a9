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

let longLivedWorker: Worker | null = null;
let longLivedQueue: Promise<unknown> = Promise.resolve();

/** One request to this tab's long-lived worker, after the ones before it (bench/browser/long-lived.worker.ts). */
function longLived(request: LongLivedRequest): Promise<LongLivedReply> {
  const worker = (longLivedWorker ??= new Worker(new URL('./long-lived.worker.ts', import.meta.url), {
    type: 'module',
    name: 'shuttle bench long-lived',
  }));
  const answer = longLivedQueue.then(
    () =>
      new Promise<LongLivedReply>((resolve, reject) => {
        const onMessage = (event: MessageEvent<LongLivedReply>) => {
          worker.removeEventListener('message', onMessage);
          worker.removeEventListener('error', onError);
          const reply = event.data;
          if (reply.kind === 'failed')
            reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
          else resolve(reply);
        };
        const onError = (event: ErrorEvent) => {
          worker.removeEventListener('message', onMessage);
          worker.removeEventListener('error', onError);
          reject(new Error(`The long-lived bench worker crashed: ${event.message}`));
        };
        worker.addEventListener('message', onMessage);
        worker.addEventListener('error', onError);
        worker.postMessage(request);
      }),
  );
  longLivedQueue = answer.catch(() => undefined);
  return answer;
}

window.shuttleBench = { run, profile, longLived };
show('ready');
