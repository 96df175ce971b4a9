/** A time shown relative to now ("4 s ago"), absolute on hover, and machine-readable in `dateTime`. */
import { useNow } from '../state/now';
import { formatAbsolute, formatRelative } from './time-format';

export function RelativeTime({ at, testId }: { at: number; testId?: string }) {
  const now = useNow();
  return (
    <time dateTime={new Date(at).toISOString()} title={formatAbsolute(at)} data-testid={testId}>
      {formatRelative(at, now)}
    </time>
  );
}
