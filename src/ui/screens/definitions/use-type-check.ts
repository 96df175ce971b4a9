/**
 * Type checking as one types: the editor's text goes to the tab's type-checking worker a moment after the
 * last keystroke (`typeCheckDelayMs`), and the answer about the latest text replaces the previous one. An
 * answer about an older text (one the person typed past) is dropped, and the worker itself skips checks
 * that a newer one overtook, so a burst of typing costs one check.
 *
 * The worker starts with the first editor that opens (not with the page), and stays for the next.
 */
import { useEffect, useRef, useState } from 'react';
import type { TypeProblem } from './type-checker';
import { typeCheckClient, type TypeCheckClient } from './typecheck-client';

/** How long after the last keystroke the text is checked. */
export const typeCheckDelayMs = 150;

export type TypeCheck = {
  /** The worker's client, for hover and completion; null for a read-only view that checks nothing. */
  client: TypeCheckClient | null;
  /** The latest answer: the problems of `source` (null until the first answer). */
  result: { source: string; problems: TypeProblem[] } | null;
  /** Why the last check failed (the worker could not load, or TypeScript threw). */
  error: Error | null;
};

/** Checks `text` as it changes; `null` checks nothing (a read-only view) but still starts the worker. */
export function useTypeCheck(text: string | null): TypeCheck {
  const [client] = useState(() => typeCheckClient());
  const [result, setResult] = useState<TypeCheck['result']>(null);
  const [error, setError] = useState<Error | null>(null);
  const latest = useRef(0);

  useEffect(() => {
    if (text === null) return;
    const call = ++latest.current;
    const timer = setTimeout(() => {
      client.problems(text).then(
        (problems) => {
          if (problems === null || call !== latest.current) return;
          setResult({ source: text, problems });
          setError(null);
        },
        (failure: unknown) => {
          if (call === latest.current)
            setError(failure instanceof Error ? failure : new Error(String(failure)));
        },
      );
    }, typeCheckDelayMs);
    return () => clearTimeout(timer);
  }, [client, text]);

  return { client, result: text === null ? null : result, error };
}
