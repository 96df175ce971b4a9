/**
 * An engine named the way people recognise it: its chip and label ("Tab B"), marked when it is this tab's.
 * An engine without a presence record (not yet loaded, or long gone) shows a neutral chip and its short id.
 */
import type { EngineRecord } from '../../public/browser';
import { selfWord } from '../data/studio-mode';
import { EngineChip } from './EngineChip';
import styles from './EngineTag.module.css';

export type EngineTagProps = {
  engineId: string;
  engine: EngineRecord | undefined;
  testId?: string;
};

export function EngineTag({ engineId, engine, testId }: EngineTagProps) {
  const label = engine?.label ?? `Engine ${engineId.slice(0, 8)}`;
  return (
    <span
      className={styles.tag}
      title={`${label} — engine ${engineId}`}
      data-testid={testId}
      data-engine-id={engineId}
    >
      <EngineChip color={engine?.color ?? '#9aa3ae'} shortLabel={engine?.shortLabel ?? '?'} />
      <span className={styles.label}>{label}</span>
      {selfWord(engine) ? <span className={styles.self}>{selfWord(engine)}</span> : null}
    </span>
  );
}
