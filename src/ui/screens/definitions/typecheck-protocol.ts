/**
 * The messages between the editor (typecheck-client.ts) and its type-checking worker (typecheck.worker.ts).
 * Every request carries the text it is about, so the worker always answers about that text.
 */
import type { CompletionDetail, CompletionItem, Completions, QuickInfo, TypeProblem } from './type-checker';

export type TypeCheckRequest =
  | ({ id: number; text: string } & TextRequest)
  /** The built-in demos' sources, by name, beside the authored file (type-checker.ts, `siblingFile`). */
  | { id: number; kind: 'siblings'; files: Readonly<Record<string, string>> };

type TextRequest =
  | { kind: 'problems' }
  | { kind: 'quick-info'; offset: number }
  | { kind: 'completions'; offset: number }
  | { kind: 'completion-detail'; offset: number; item: Pick<CompletionItem, 'name' | 'source' | 'data'> };

export type TypeCheckResponse = { id: number } & (
  | { kind: 'problems'; problems: TypeProblem[] }
  | { kind: 'quick-info'; info: QuickInfo | null }
  | { kind: 'completions'; completions: Completions | null }
  | { kind: 'completion-detail'; detail: CompletionDetail | null }
  | { kind: 'siblings' }
  /** A newer check of the problems came in before this one started: its text is out of date. */
  | { kind: 'stale' }
  | { kind: 'error'; message: string }
);
