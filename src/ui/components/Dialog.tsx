/**
 * A modal dialog on the native `<dialog>` element: focus moves in and is kept inside, Escape closes it, the
 * page behind is inert, and focus returns where it was when it closes. A click on the backdrop closes it too.
 */
import { useEffect, useRef, type ReactNode, type RefObject } from 'react';
import styles from './Dialog.module.css';
import { Icon } from './icons';

export type DialogProps = {
  open: boolean;
  onClose: () => void;
  title: string;
  /** A line under the title. */
  description?: ReactNode;
  children: ReactNode;
  /** Buttons, right-aligned at the bottom. */
  footer?: ReactNode;
  width?: number;
  testId?: string;
};

export function Dialog({
  open,
  onClose,
  title,
  description,
  children,
  footer,
  width = 560,
  testId,
}: DialogProps) {
  const ref = useModalDialog(open);
  return (
    <dialog
      ref={ref}
      className={styles.dialog}
      style={{ width: `min(${width}px, calc(100vw - 32px))` }}
      aria-labelledby={testId ? `${testId}-title` : undefined}
      data-testid={testId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onMouseDown={(event) => {
        if (event.target === ref.current) onClose();
      }}
    >
      {open ? (
        <div className={styles.frame}>
          <header className={styles.header}>
            <div>
              <h2 className={styles.title} id={testId ? `${testId}-title` : undefined}>
                {title}
              </h2>
              {description ? <p className={styles.description}>{description}</p> : null}
            </div>
            <button type="button" className={styles.close} onClick={onClose} aria-label="Close">
              <Icon name="close" />
            </button>
          </header>
          <div className={styles.body}>{children}</div>
          {footer ? <footer className={styles.footer}>{footer}</footer> : null}
        </div>
      ) : null}
    </dialog>
  );
}

/** Keeps a `<dialog>` shown as a modal (focus trapped, page inert) exactly while `open`; returns its ref. */
export function useModalDialog(open: boolean): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return ref;
}
