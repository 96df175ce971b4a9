/**
 * The compile sandbox's worker (see compile-sandbox.ts): compiles and evaluates definition sources it is
 * sent and reports each outcome as plain data. It loads the compiler before saying it is ready, so the
 * sandbox's per-source timeout measures the source alone. It is terminated when a source does not finish
 * loading; errors that the evaluated code throws later (from its own timers) are swallowed here.
 */
import { compileHere, type SandboxMessage, type SandboxRequest } from '../host/authoring/compile-sandbox';

type SandboxScope = {
  postMessage(message: SandboxMessage): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<SandboxRequest>) => void): void;
  addEventListener(type: 'error' | 'unhandledrejection', listener: (event: Event) => void): void;
};

const scope = self as unknown as SandboxScope;

scope.addEventListener('message', (event) => {
  const { id, source, fileName } = event.data;
  void compileHere(source, fileName).then((report) => scope.postMessage({ type: 'report', id, report }));
});
scope.addEventListener('error', (event) => event.preventDefault());
scope.addEventListener('unhandledrejection', (event) => event.preventDefault());

// Warm up: the first compile loads sucrase.
void compileHere('export default 0;', 'warm-up.ts').then(() => scope.postMessage({ type: 'ready' }));
