/**
 * The editor's type-checking worker: the TypeScript language service (type-checker.ts) off the page's
 * thread, so typing never waits for it. Started by typecheck-client.ts when an editor opens; neither
 * TypeScript nor the libs and declarations it reads are in the page's bundles (this worker is a bundle of its
 * own).
 *
 * Requests are answered in order, except that a check of the problems is skipped (answered `stale`) when a
 * newer one arrived before it started: while someone types, only the latest text is checked.
 */
import libs from 'virtual:typescript-libs';
import declarations from '../../../public/workflow.ts?declarations';
import { TypeChecker } from './type-checker';
import type { TypeCheckRequest, TypeCheckResponse } from './typecheck-protocol';

const checker = new TypeChecker({ libs, declarations });
let latestProblems = -1;

function answer(request: TypeCheckRequest): TypeCheckResponse {
  checker.setFile(request.text);
  switch (request.kind) {
    case 'problems':
      return { id: request.id, kind: 'problems', problems: checker.problems() };
    case 'quick-info':
      return { id: request.id, kind: 'quick-info', info: checker.quickInfo(request.offset) };
    case 'completions':
      return { id: request.id, kind: 'completions', completions: checker.completions(request.offset) };
    case 'completion-detail':
      return {
        id: request.id,
        kind: 'completion-detail',
        detail: checker.completionDetail(request.offset, request.item),
      };
  }
}

function handle(request: TypeCheckRequest): void {
  let response: TypeCheckResponse;
  if (request.kind === 'problems' && request.id !== latestProblems)
    response = { id: request.id, kind: 'stale' };
  else
    try {
      response = answer(request);
    } catch (error) {
      response = {
        id: request.id,
        kind: 'error',
        message: `The type checker failed on this source: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  postMessage(response);
}

addEventListener('message', (event: MessageEvent<TypeCheckRequest>) => {
  const request = event.data;
  if (request.kind === 'problems') {
    latestProblems = request.id;
    // Behind the messages already queued: a newer check among them makes this one stale.
    setTimeout(() => handle(request), 0);
  } else handle(request);
});
