/**
 * The studio's buttons: primary (one per area), secondary, ghost (toolbars) and danger (destroys something).
 * Always a real `<button>`, labelled by its text or by `label` when it shows only an icon.
 */
import type { ButtonHTMLAttributes, ReactNode } from 'react';
import styles from './Button.module.css';
import { Icon, type IconName } from './icons';

export type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'className'> & {
  variant?: 'primary' | 'secondary' | 'ghost' | 'danger';
  size?: 'sm' | 'md';
  icon?: IconName;
  /** For an icon-only button: its accessible name (also its tooltip). */
  label?: string;
  testId?: string;
  busy?: boolean;
  children?: ReactNode;
};

export function Button({
  variant = 'secondary',
  size = 'md',
  icon,
  label,
  testId,
  busy,
  children,
  type = 'button',
  disabled,
  ...rest
}: ButtonProps) {
  const iconOnly = !children;
  return (
    <button
      type={type}
      className={`${styles.button} ${styles[variant]} ${styles[size]} ${iconOnly ? styles.iconOnly : ''}`}
      aria-label={label}
      title={rest.title ?? label}
      data-testid={testId}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy ? (
        <span className={styles.spinner} aria-hidden />
      ) : icon ? (
        <Icon name={icon} size={size === 'sm' ? 14 : 16} />
      ) : null}
      {children}
    </button>
  );
}
