/**
 * What the shell says about this tab's engine: the host's own status, overridden by the state of the link
 * to its worker (a crashed or silent worker cannot report its status itself).
 */
import type { ClientConnection } from '../../public/browser';
import type { HelloResult } from '../../public/browser';

export type EngineDisplayState =
  | 'connecting'
  | 'starting'
  | 'running'
  | 'frozen'
  | 'stopping'
  | 'stopped'
  | 'failed'
  | 'crashed'
  | 'unresponsive';

export type EngineDisplayStatus = {
  state: EngineDisplayState;
  tone: 'info' | 'success' | 'warning' | 'danger' | 'neutral';
  /** Why, for people; present when something is wrong. */
  message?: string;
};

export function engineDisplayStatus(
  connection: ClientConnection,
  engine: HelloResult | undefined,
  now: number = Date.now(),
): EngineDisplayStatus {
  // A frozen worker is silent on purpose: its silence is the freeze, not a death (until well past its end).
  const frozenUntil = engine?.status.state === 'frozen' ? engine.status.frozenUntil : undefined;
  if (frozenUntil !== undefined && connection.state === 'unresponsive' && now < frozenUntil + 5_000)
    return { state: 'frozen', tone: 'warning', message: 'Frozen on purpose (chaos): renews no claims.' };
  if (connection.state === 'crashed')
    return { state: 'crashed', tone: 'danger', message: connection.message };
  if (connection.state === 'unresponsive' || connection.state === 'closed')
    return { state: 'unresponsive', tone: 'danger', message: connection.message };
  if (!engine) return { state: 'connecting', tone: 'neutral' };
  const { state, message } = engine.status;
  switch (state) {
    case 'running':
      return { state, tone: 'success' };
    case 'starting':
    case 'stopping':
      return { state, tone: 'info' };
    case 'frozen':
      return { state, tone: 'warning', message: message ?? 'Claim renewals are frozen.' };
    case 'stopped':
      return { state, tone: 'neutral', message: message ?? 'This tab’s engine has shut down.' };
    case 'failed':
      return { state, tone: 'danger', ...(message ? { message } : {}) };
  }
}
