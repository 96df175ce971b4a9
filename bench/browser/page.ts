/**
 * The bench page (bench.html): starts the bench worker and offers `window.shuttleBench.run(options)`, which
 * the Node runner (bench/browser.ts) calls through Playwright. Progress is shown on the page and logged to
 * the console, which the runner forwards to its own output. One run at a time.
 */
import type { BenchReply, BenchRequest, ThroughputOptions, ThroughputResult } from './protocol';

const status = document.querySelector<HTMLElement>('[data-testid="bench-status"]');
const log = document.querySelector<HTMLElement>('[data-testid="bench-log"]');

function show(message: string): void {
  if (status) status.textContent = message;
  if (log) log.textContent += `${message}\n`;
  console.info(`[shuttle bench] ${message}`);
}

let running: Promise<ThroughputResult> | null = null;

function run(options: ThroughputOptions): Promise<ThroughputResult> {
  if (running) return Promise.reject(new Error('A bench run is already in progress on this page.'));
  const worker = new Worker(new URL('./bench.worker.ts', import.meta.url), {
    type: 'module',
    name: 'shuttle bench',
  });
  running = new Promise<ThroughputResult>((resolve, reject) => {
    worker.addEventListener('message', (event: MessageEvent<BenchReply>) => {
      const reply = event.data;
      if (reply.kind === 'progress') show(reply.message);
      else if (reply.kind === 'done') {
        show('done');
        resolve(reply.result);
      } else {
        show(`failed: ${reply.error.name}: ${reply.error.message}`);
        reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
      }
    });
    worker.addEventListener('error', (event) => {
      show(`the bench worker crashed: ${event.message}`);
      reject(new Error(`The bench worker crashed: ${event.message}`));
    });
    worker.postMessage({ kind: 'run', options } satisfies BenchRequest);
  }).finally(() => {
    worker.terminate();
    running = null;
  });
  return running;
}

window.shuttleBench = { run };
show('ready');
