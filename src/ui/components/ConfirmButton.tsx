/**
 * A button for an action that cannot be taken back (crash an engine, kill a process, rerun a workflow): the
 * click opens a dialog that says what will happen, and only its confirm button acts. The button's test id
 * names the dialog (`<testId>-dialog`) and its confirm button (`<testId>-confirm`).
 */
import { useState, type ReactNode } from 'react';
import { Button, type ButtonProps } from './Button';
import { Dialog } from './Dialog';

export type ConfirmButtonProps = Omit<ButtonProps, 'onClick' | 'testId'> & {
  testId: string;
  confirm: {
    title: string;
    /** What will happen, in a sentence or two. */
    body: ReactNode;
    /** The confirm button's label (the action's verb). */
    submit: string;
    /** Default 'danger'. */
    variant?: ButtonProps['variant'];
  };
  /** Runs when the person confirms; the dialog closes at once. */
  onConfirm: () => void;
};

export function ConfirmButton({ testId, confirm, onConfirm, ...button }: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button {...button} testId={testId} onClick={() => setOpen(true)} />
      {open ? (
        <Dialog
          open
          onClose={() => setOpen(false)}
          title={confirm.title}
          width={480}
          testId={`${testId}-dialog`}
          footer={
            <>
              <Button onClick={() => setOpen(false)}>Keep it</Button>
              <Button
                variant={confirm.variant ?? 'danger'}
                testId={`${testId}-confirm`}
                onClick={() => {
                  setOpen(false);
                  onConfirm();
                }}
              >
                {confirm.submit}
              </Button>
            </>
          }
        >
          <p>{confirm.body}</p>
        </Dialog>
      ) : null}
    </>
  );
}
