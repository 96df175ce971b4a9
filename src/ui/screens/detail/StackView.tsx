/**
 * A recorded failure's stack, as its author reads it: the lines of workflow code (mapped to the authored file
 * and line when the failure was recorded), with the engine's own frames hidden behind a "Show engine frames"
 * toggle (stack-lines.ts), and the failure it was caused by (an activity's own error under the
 * `ActivityFailedError` a workflow failed with), with its stack, below it.
 */
import { useId, useState } from 'react';
import type { SerializedError } from '../../../public';
import { causeOf, stackLines, visibleLines } from './stack-lines';
import styles from './StackView.module.css';

export function StackView({
  error,
  testId,
  open = true,
}: {
  error: SerializedError;
  testId: string;
  /** Whether the stack starts unfolded. */
  open?: boolean;
}) {
  const cause = causeOf(error);
  if (!error.stack && !cause?.stack) return null;
  return (
    <div className={styles.stacks}>
      {error.stack ? <Stack stack={error.stack} title="Stack" testId={testId} open={open} /> : null}
      {cause?.stack ? (
        <Stack
          stack={cause.stack}
          title={`Caused by ${cause.name}: ${cause.message}`}
          testId={`${testId}-cause`}
          open={open}
        />
      ) : null}
    </div>
  );
}

function Stack({
  stack,
  title,
  testId,
  open,
}: {
  stack: string;
  title: string;
  testId: string;
  open: boolean;
}) {
  const [showEngine, setShowEngine] = useState(false);
  const toggleId = useId();
  const parsed = stackLines(stack);
  const lines = visibleLines(parsed, showEngine);
  return (
    <details open={open} className={styles.stack} data-testid={testId}>
      <summary>{title}</summary>
      <pre className={styles.pre} data-testid={`${testId}-lines`}>
        {lines.map((line, index) => (
          <span
            key={index}
            className={line.engine ? styles.engineFrame : undefined}
            data-engine-frame={line.engine ? 'true' : undefined}
            title={line.engine ? 'A frame of the engine’s own code' : undefined}
          >
            {line.text}
            {'\n'}
          </span>
        ))}
      </pre>
      {parsed.engineFrames > 0 ? (
        <label className={styles.toggle} htmlFor={toggleId}>
          <input
            id={toggleId}
            type="checkbox"
            checked={showEngine}
            onChange={(event) => setShowEngine(event.target.checked)}
          />
          Show engine frames ({parsed.engineFrames}
          {showEngine ? '' : ' hidden'})
        </label>
      ) : null}
    </details>
  );
}
