/**
 * "Connect to server…" (command palette): asks for the URL a studio server printed and opens it in this
 * tab. In tab mode that ends this tab's engine (its workflows move to other tabs); the dialog says so.
 */
import { useState, type FormEvent } from 'react';
import { create } from 'zustand';
import { Button } from '../components/Button';
import { Dialog } from '../components/Dialog';
import { useStudioMode } from '../data/studio-mode';
import { hasToken, parseServerUrl } from './connect-url';
import styles from './ConnectDialog.module.css';

export const useConnectDialog = create<{ open: boolean; show(): void; hide(): void }>()((set) => ({
  open: false,
  show: () => set({ open: true }),
  hide: () => set({ open: false }),
}));

export function ConnectDialog() {
  const open = useConnectDialog((state) => state.open);
  const hide = useConnectDialog((state) => state.hide);
  return (
    <Dialog
      open={open}
      onClose={hide}
      title="Connect to a studio server"
      description="Open the studio of a server store: the page then runs no engine of its own."
      width={520}
      testId="connect.dialog"
    >
      {open ? <ConnectForm onClose={hide} /> : null}
    </Dialog>
  );
}

function ConnectForm({ onClose }: { onClose: () => void }) {
  const [text, setText] = useState('');
  const [touched, setTouched] = useState(false);
  const { server } = useStudioMode();
  const target = parseServerUrl(text);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (!target.ok) return;
    onClose();
    location.assign(target.url);
  };
  return (
    <form className={styles.form} onSubmit={submit} noValidate>
      <label className={styles.field}>
        <span className={styles.label}>Server URL</span>
        <input
          className={styles.input}
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder="http://127.0.0.1:7300/?token=…"
          autoFocus
          spellCheck={false}
          autoComplete="off"
          aria-invalid={touched && !target.ok}
          aria-describedby="connect-hint"
          data-testid="connect.url"
        />
      </label>
      <p id="connect-hint" className={styles.hint} role={touched && !target.ok ? 'alert' : undefined}>
        {touched && !target.ok
          ? target.problem
          : target.ok && !hasToken(target.url)
            ? 'This URL has no token: the server will refuse it unless this browser already has its cookie. Use the URL it printed.'
            : 'The URL that shuttle serve or shuttle dev printed, token included.'}
      </p>
      {!server ? (
        <p className={styles.hint}>
          This tab’s engine stops when the page leaves; other open tabs take its workflows over.
        </p>
      ) : null}
      <div className={styles.footer}>
        <Button onClick={onClose}>Cancel</Button>
        <Button type="submit" variant="primary" testId="connect.submit">
          Connect
        </Button>
      </div>
    </form>
  );
}
