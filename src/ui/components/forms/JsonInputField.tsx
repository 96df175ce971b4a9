/**
 * The JSON input of the start dialog (both tabs: start now, and on a schedule): a textarea prefilled with the
 * definition's sample, recent inputs one click away, Format and Sample, and a status line that says as you
 * type whether the JSON parses (with the line and column of a mistake) and how large it is against the
 * engine's payload limit.
 */
import { Button } from '../Button';
import styles from './StartDialog.module.css';
import { formatBytes, formatJson, payloadBytes, payloadLimitBytes, type JsonParse } from './start-form';

export type JsonInputFieldProps = {
  id: string;
  value: string;
  onChange: (value: string) => void;
  parsed: JsonParse;
  sample: string;
  recent: readonly string[];
  /** The prefix of the test ids (`start` → `start.input`, `start.json-error`, …). */
  testPrefix: string;
  rows?: number;
  /** Short, not growing: the start dialog's options are open below it and need the room. */
  compact?: boolean;
};

export function JsonInputField({
  id,
  value,
  onChange,
  parsed,
  sample,
  recent,
  testPrefix,
  rows = 12,
  compact = false,
}: JsonInputFieldProps) {
  const bytes = parsed.ok ? payloadBytes(parsed.value) : 0;
  return (
    <div className={`${styles.field} ${compact ? '' : styles.grow}`}>
      <div className={styles.labelRow}>
        <label htmlFor={id} className={styles.label}>
          Input <span className={styles.hint}>JSON</span>
        </label>
        <div className={styles.inputTools}>
          {recent.length > 0 ? (
            <select
              className={styles.recent}
              aria-label="Recent inputs"
              value=""
              onChange={(event) => {
                if (event.target.value) onChange(event.target.value);
              }}
              data-testid={`${testPrefix}.recent`}
            >
              <option value="">Recent inputs…</option>
              {recent.map((item, index) => (
                <option key={index} value={item}>
                  {item.replace(/\s+/g, ' ').slice(0, 70)}
                </option>
              ))}
            </select>
          ) : null}
          <Button
            size="sm"
            variant="ghost"
            onClick={() => parsed.ok && onChange(formatJson(parsed.value))}
            disabled={!parsed.ok || parsed.empty}
          >
            Format
          </Button>
          <Button
            size="sm"
            variant="ghost"
            onClick={() => onChange(sample)}
            disabled={value === sample}
            testId={`${testPrefix}.reset-input`}
          >
            Sample
          </Button>
        </div>
      </div>
      <textarea
        id={id}
        className={`${styles.textarea} ${compact ? styles.compactTextarea : ''} ${parsed.ok ? '' : styles.invalid}`}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        rows={compact ? 4 : rows}
        aria-invalid={!parsed.ok}
        aria-describedby={`${id}-status`}
        data-testid={`${testPrefix}.input`}
      />
      <div id={`${id}-status`} className={styles.inputStatus}>
        {parsed.ok ? (
          <span
            className={bytes > payloadLimitBytes ? styles.warning : styles.muted}
            data-testid={`${testPrefix}.input-size`}
          >
            {parsed.empty
              ? 'No input: the workflow gets undefined.'
              : `${formatBytes(bytes)}${bytes > payloadLimitBytes ? ` — over the engine’s ${formatBytes(payloadLimitBytes)} payload limit, which it refuses: make it smaller` : ''}`}
          </span>
        ) : (
          <span className={styles.danger} role="alert" data-testid={`${testPrefix}.json-error`}>
            Invalid JSON{parsed.line !== null ? ` at line ${parsed.line}, column ${parsed.column}` : ''}:{' '}
            {parsed.message}
          </span>
        )}
      </div>
    </div>
  );
}
