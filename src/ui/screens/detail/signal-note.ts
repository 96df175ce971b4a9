/**
 * What the signal dialog says about a name, so that a signal to a name the workflow never waits for is not
 * reported "sent" and then seen nowhere. Signals are buffered durably; one the workflow does not wait for now
 * stays buffered until it does — which may be never.
 */
export function signalNote(name: string, awaited: readonly string[]): string | null {
  const trimmed = name.trim();
  if (!trimmed || awaited.includes(trimmed)) return null;
  return awaited.length > 0
    ? `It waits for ${awaited.map((candidate) => `'${candidate}'`).join(', ')} now, not '${trimmed}': a '${trimmed}' signal is stored and stays buffered until the workflow waits for one — perhaps never.`
    : `It waits for no signal right now: a '${trimmed}' signal is stored and stays buffered until the workflow waits for one — perhaps never.`;
}
