/**
 * Text that, when it does not fit, is cut in the middle instead of at the end: the start shrinks behind an
 * ellipsis and the last `tail` characters always show. Generated ids share their start
 * (`drill-handoff-mx6e64ot-…`) and differ at the end, so a list of them stays readable. The whole text is
 * in the DOM (copying and find-in-page see it) and in the tooltip.
 */
import styles from './MiddleTruncate.module.css';

export function MiddleTruncate({ text, tail = 10 }: { text: string; tail?: number }) {
  const split = text.length > tail + 4 ? text.length - tail : text.length;
  return (
    <span className={styles.text} data-middle-truncate>
      <span className={styles.head}>{text.slice(0, split)}</span>
      {split < text.length ? (
        <span className={styles.tail} data-testid="middle-truncate.tail">
          {text.slice(split)}
        </span>
      ) : null}
    </span>
  );
}
