/**
 * An engine's colour chip: a rounded square in the engine's colour with its short label inside, so engines
 * are told apart by the letters as well as the colour. Text is dark or light, whichever contrasts more.
 */
import styles from './EngineChip.module.css';

function channel(value: number): number {
  const c = value / 255;
  return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** Relative luminance (WCAG) of `#rrggbb`; 0.5 for anything else. */
function luminance(hex: string): number {
  const match = /^#([0-9a-f]{6})$/i.exec(hex);
  if (!match) return 0.5;
  const value = parseInt(match[1]!, 16);
  return 0.2126 * channel(value >> 16) + 0.7152 * channel((value >> 8) & 255) + 0.0722 * channel(value & 255);
}

/** `#111827` or `#ffffff`, whichever reads better on `background`. */
export function textColorOn(background: string): string {
  const l = luminance(background);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#111827' : '#ffffff';
}

export type EngineChipProps = {
  color: string;
  shortLabel: string;
  size?: 'sm' | 'md' | 'lg';
  title?: string;
  testId?: string;
};

export function EngineChip({ color, shortLabel, size = 'sm', title, testId }: EngineChipProps) {
  return (
    <span
      className={`${styles.chip} ${styles[size]}`}
      style={{ background: color, color: textColorOn(color) }}
      title={title}
      data-testid={testId}
      aria-hidden={title ? undefined : true}
    >
      {shortLabel}
    </span>
  );
}
