/**
 * A recorded stack as the studio shows it: its lines, each frame marked as the workflow code's or the
 * engine's. The engine marks its own frames when it records a failure (a line ending ` [engine]`: the host's
 * stack mapping, docs/authoring.md "When something fails"); the studio hides them until asked, so a stack
 * reads as the author's lines (`order.ts:12:7`). Lines that are not frames (the message) are always shown.
 */
import type { SerializedError } from '../../../public';

/** What ends an engine frame in a recorded stack (the host's mark). */
export const engineFrameMark = ' [engine]';

export type StackLine = { text: string; engine: boolean };

export type StackLines = {
  lines: StackLine[];
  /** How many lines are engine frames (hidden unless shown). */
  engineFrames: number;
};

export function stackLines(stack: string): StackLines {
  const lines = stack.split('\n').map((line): StackLine => {
    const engine = /^\s*at\s/.test(line) && line.endsWith(engineFrameMark);
    return { text: engine ? line.slice(0, -engineFrameMark.length) : line, engine };
  });
  return { lines, engineFrames: lines.filter((line) => line.engine).length };
}

/** The stack's lines to show: every line, or all but the engine frames. */
export function visibleLines(stack: StackLines, showEngineFrames: boolean): StackLine[] {
  return showEngineFrames ? stack.lines : stack.lines.filter((line) => !line.engine);
}

/**
 * The failure an error carries as its cause, when it was recorded with one: an `ActivityFailedError`'s or a
 * `ChildWorkflowFailedError`'s `failure` (the activity's own error, with its stack).
 */
export function causeOf(error: SerializedError): SerializedError | null {
  const failure = error.details?.failure;
  if (typeof failure !== 'object' || failure === null) return null;
  const candidate = failure as Partial<SerializedError>;
  return typeof candidate.name === 'string' && typeof candidate.message === 'string'
    ? (candidate as SerializedError)
    : null;
}

/** An error's details as shown beside its stacks: the cause's stack is left out (it is shown as a stack). */
export function detailsShown(error: SerializedError): Record<string, unknown> | undefined {
  const details = error.details;
  const cause = causeOf(error);
  if (!details || !cause?.stack) return details;
  const { stack: _shown, ...failure } = cause;
  return { ...details, failure };
}
