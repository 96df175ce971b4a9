/**
 * The editor's side of its type-checking worker (typecheck.worker.ts): one worker for the tab, started the
 * first time an editor asks for it (so neither it nor TypeScript loads before someone opens a definition),
 * and kept for the next definition opened.
 *
 * `problems(text)` resolves with TypeScript's problems in `text`, or null when a newer `problems` call was
 * made before the worker got to this one (stale: the caller shows the newer one's answer instead).
 */
import type { CompletionDetail, CompletionItem, Completions, QuickInfo, TypeProblem } from './type-checker';
import type { TypeCheckRequest, TypeCheckResponse } from './typecheck-protocol';

export type TypeCheckClient = {
  /** Puts the built-in demos' sources (by name) beside the authored file, for the types a copy imports. */
  setSiblings(files: Readonly<Record<string, string>>): void;
  problems(text: string): Promise<TypeProblem[] | null>;
  quickInfo(text: string, offset: number): Promise<QuickInfo | null>;
  completions(text: string, offset: number): Promise<Completions | null>;
  completionDetail(
    text: string,
    offset: number,
    item: Pick<CompletionItem, 'name' | 'source' | 'data'>,
  ): Promise<CompletionDetail | null>;
};

type Pending = { resolve(response: TypeCheckResponse): void; reject(error: Error): void };

type Distribute<T> = T extends { text: string } ? Omit<T, 'id' | 'text'> : never;

function startWorker(): TypeCheckClient {
  const worker = new Worker(new URL('./typecheck.worker.ts', import.meta.url), {
    type: 'module',
    name: 'shuttle type checker',
  });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let broken: Error | null = null;
  worker.addEventListener('message', (event: MessageEvent<TypeCheckResponse>) => {
    const entry = pending.get(event.data.id);
    pending.delete(event.data.id);
    entry?.resolve(event.data);
  });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    broken = new Error(
      `The type checker's worker stopped: ${event.message || 'it could not be loaded'}. Reload the tab to start it again.`,
    );
    for (const entry of pending.values()) entry.reject(broken);
    pending.clear();
  });

  const request = (body: Distribute<TypeCheckRequest>, text: string): Promise<TypeCheckResponse> => {
    if (broken) return Promise.reject(broken);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...body, id, text } as TypeCheckRequest);
    }).then((response) => {
      const answer = response as TypeCheckResponse;
      if (answer.kind === 'error') throw new Error(answer.message);
      return answer;
    });
  };

  return {
    setSiblings(files) {
      if (broken) return;
      const id = nextId++;
      worker.postMessage({ id, kind: 'siblings', files } satisfies TypeCheckRequest);
    },
    async problems(text) {
      const response = await request({ kind: 'problems' }, text);
      return response.kind === 'problems' ? response.problems : null;
    },
    async quickInfo(text, offset) {
      const response = await request({ kind: 'quick-info', offset }, text);
      return response.kind === 'quick-info' ? response.info : null;
    },
    async completions(text, offset) {
      const response = await request({ kind: 'completions', offset }, text);
      return response.kind === 'completions' ? response.completions : null;
    },
    async completionDetail(text, offset, item) {
      const response = await request({ kind: 'completion-detail', offset, item }, text);
      return response.kind === 'completion-detail' ? response.detail : null;
    },
  };
}

let shared: TypeCheckClient | null = null;

/** The tab's type checker, started on first use. */
export function typeCheckClient(): TypeCheckClient {
  shared ??= startWorker();
  return shared;
}
