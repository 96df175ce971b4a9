/**
 * How the type-checking worker answers the editor (typecheck-protocol.ts), free of the worker so a test runs
 * it: requests are answered in order, except that a check of the problems is deferred behind the messages
 * already queued and skipped (answered `stale`) when a newer one arrived before it started — while someone
 * types, only the latest text is checked. A checker that throws answers `error`, naming what failed.
 */
import { siblingFile, type TypeChecker } from './type-checker';
import type { TypeCheckRequest, TypeCheckResponse } from './typecheck-protocol';

export function serveTypeChecks(
  checker: TypeChecker,
  post: (response: TypeCheckResponse) => void,
): (request: TypeCheckRequest) => void {
  let latestProblems = -1;

  const answer = (request: TypeCheckRequest): TypeCheckResponse => {
    if (request.kind === 'siblings') {
      for (const [name, text] of Object.entries(request.files)) checker.setFile(text, siblingFile(name));
      return { id: request.id, kind: 'siblings' };
    }
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
  };

  const handle = (request: TypeCheckRequest): void => {
    if (request.kind === 'problems' && request.id !== latestProblems) {
      post({ id: request.id, kind: 'stale' });
      return;
    }
    try {
      post(answer(request));
    } catch (error) {
      post({
        id: request.id,
        kind: 'error',
        message: `The type checker failed on this source (${request.kind}): ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  };

  return (request) => {
    if (request.kind !== 'problems') return handle(request);
    latestProblems = request.id;
    // Behind the messages already queued: a newer check among them makes this one stale.
    setTimeout(() => handle(request), 0);
  };
}
