/**
 * Turns an error from the worker into words for people: a short title, the engine's own message, and what to
 * do about it. The engine's messages already say what went wrong precisely (they name the workflow, the
 * limit, the key); this adds the next step where the name alone does not make it obvious — reload the tab
 * when its worker died, free space when the disk is full, close the other tab that blocks an upgrade.
 */

export type ErrorExplanation = {
  /** The error's class name, e.g. `PayloadTooLargeError`. */
  name: string;
  title: string;
  message: string;
  /** What to do, when there is something to do. */
  advice: string | null;
  /** Whether reloading the tab is the remedy (the UI then offers a button). */
  reload: boolean;
};

type Rule = { title: string; advice: string | null; reload?: boolean };

const byName: Record<string, Rule> = {
  EngineWorkerStoppedError: {
    title: 'This tab’s engine worker stopped',
    advice: 'Reload the tab to start a new engine. Workflows it owned carry on in other tabs.',
    reload: true,
  },
  RequestTimeoutError: {
    title: 'The engine did not answer',
    advice: 'It may be busy or stopped. Try again; reload the tab if it keeps happening.',
  },
  ProtocolVersionMismatchError: {
    title: 'This tab runs an old build of the studio',
    advice: 'Reload the tab to load the current build.',
    reload: true,
  },
  PayloadTooLargeError: {
    title: 'Payload too large',
    advice: 'Store large data elsewhere and pass a reference.',
  },
  PayloadNotSerializableError: { title: 'Not plain JSON data', advice: null },
  InvalidArgumentError: { title: 'Invalid argument', advice: null },
  InvalidOptionsError: { title: 'Invalid options', advice: null },
  WorkflowAlreadyExistsError: {
    title: 'A workflow with this id already exists',
    advice: 'Choose another id, or leave the id empty for a random one.',
  },
  WorkflowIdReuseError: {
    title: 'This id last ran as another workflow type',
    advice:
      'Choose another id, or start it again from the start dialog and choose to reuse the id for the new type (its earlier runs stay readable).',
  },
  WorkflowNotFoundError: {
    title: 'No such workflow',
    advice: 'It may have been purged, or the id is mistyped.',
  },
  WorkflowNotRegisteredError: {
    title: 'Unknown workflow type',
    advice: 'Pick a definition this engine has registered.',
  },
  InvalidWorkflowStateError: { title: 'Not possible in this state', advice: null },
  UpdateRejectedError: { title: 'Update rejected', advice: null },
  ActivityCompletionRefusedError: {
    title: 'Completion refused',
    advice: 'An external activity takes exactly one completion or failure; nothing was changed.',
  },
  UpdateTimeoutError: {
    title: 'The update was not applied in time',
    advice: 'The owning engine may be frozen or gone; the update stays queued for the next owner.',
  },
  QueryFailedError: { title: 'Query failed', advice: null },
  WorkflowFailedError: { title: 'The workflow failed', advice: null },
  WorkflowCancelledError: { title: 'The workflow was cancelled', advice: null },
  WorkflowTerminatedError: { title: 'The workflow was terminated', advice: null },
  WorkflowTimedOutError: { title: 'The workflow timed out', advice: null },
  EngineDisposedError: {
    title: 'This tab’s engine has shut down',
    advice: 'Restart it from the Engines screen, or reload the tab.',
    reload: true,
  },
  DataCloneError: { title: 'Could not send this to the engine', advice: null },
  ChaosUnavailableError: {
    title: 'Chaos controls are not available',
    advice: 'This build of the engine worker has no control channel yet.',
  },
};

/** The advice for a storage failure, from its code (`StorageError.code`) or its message. */
function storageRule(error: { code?: unknown; message: string }): Rule {
  const code = typeof error.code === 'string' ? error.code : '';
  const text = `${code} ${error.message}`.toLowerCase();
  if (text.includes('quota'))
    return {
      title: 'The browser’s storage is full',
      advice: 'Free disk space or clear this site’s data for other databases, then reload the tab.',
      reload: true,
    };
  if (text.includes('blocked'))
    return {
      title: 'The database is blocked by another tab',
      advice: 'Another tab holds an older version of the database open. Close or reload the other tabs.',
      reload: true,
    };
  if (text.includes('closed') || text.includes('version-change') || text.includes('deleted'))
    return {
      title: 'The database went away',
      advice: 'It was deleted or upgraded underneath this tab. Reload the tab to reopen it.',
      reload: true,
    };
  return { title: 'Storage failed', advice: 'Try again; reload the tab if it keeps happening.' };
}

/** "312 B", "12.4 KB", "1.2 MB". */
function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * A payload refusal in the page's words, from the error's fields (`what`, `bytes`, `limitBytes`): what was too
 * large without the workflow id the page already shows — a start's id may be one the engine generated, which
 * the person never saw —, its size and the limit. Null when the fields are missing (the engine's message
 * stands).
 */
function payloadTooLargeMessage(error: unknown): string | null {
  const { what, bytes, limitBytes } = error as { what?: unknown; bytes?: unknown; limitBytes?: unknown };
  if (typeof what !== 'string' || typeof bytes !== 'number' || typeof limitBytes !== 'number') return null;
  const subject = what.replace(/ (?:of|to) (?:child )?workflow '(?:[^'\\]|\\.)*'$/, '');
  const lead = subject === 'Input' ? 'The input' : subject;
  return `${lead} is ${bytesText(bytes)} (${bytes.toLocaleString('en-US')} bytes), over the engine’s limit of ${bytesText(limitBytes)}.`;
}

/** Explains any thrown value. */
export function explainError(error: unknown): ErrorExplanation {
  const name = error instanceof Error ? error.name || 'Error' : 'Error';
  let message =
    error instanceof Error ? error.message : typeof error === 'string' ? error : 'Something went wrong.';
  if (name === 'PayloadTooLargeError') message = payloadTooLargeMessage(error) ?? message;
  const rule =
    name === 'StorageError' || name === 'QuotaExceededError'
      ? storageRule({ code: (error as { code?: unknown }).code, message: `${name} ${message}` })
      : (byName[name] ?? { title: 'Something went wrong', advice: null });
  // Advice the message already gives is not said twice.
  const advice = rule.advice && !message.includes(rule.advice) ? rule.advice : null;
  return { name, title: rule.title, message, advice, reload: rule.reload ?? false };
}
