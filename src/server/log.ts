/**
 * The server's log: JSON lines on stdout, one object per line — `{ time, level, msg, …fields }` — so any log
 * shipper can read them. The worker logs what an operator needs to follow custody: every claim, takeover,
 * loss and fenced write, every failed workflow, its own start and stop, and warnings.
 */
import type { EngineEvent } from '../engine';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type Logger = {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
};

/** A logger writing JSON lines to `write` (stdout by default), with `base` fields on every line. */
export function createLogger(
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  const log = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}) =>
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...fields }));
  return {
    log,
    info: (msg, fields) => log('info', msg, fields),
    warn: (msg, fields) => log('warn', msg, fields),
    error: (msg, fields) => log('error', msg, fields),
  };
}

/** The engine events an operator follows, as log lines (others are not logged). */
export function logEngineEvent(logger: Logger, event: EngineEvent): void {
  switch (event.type) {
    case 'claim.acquired':
      return logger.info('claim acquired', {
        workflowId: event.workflowId,
        epoch: event.epoch,
        how: event.how,
      });
    case 'claim.taken-over':
      return logger.info('claim taken over', {
        workflowId: event.workflowId,
        epoch: event.epoch,
        fromEngineId: event.fromEngineId,
        fromEpoch: event.fromEpoch,
      });
    case 'claim.released':
      return logger.info('claim released', { workflowId: event.workflowId, epoch: event.epoch });
    case 'claim.lost':
      return logger.warn('claim lost', {
        workflowId: event.workflowId,
        epoch: event.epoch,
        reason: event.reason,
      });
    case 'write.fenced-out':
      return logger.warn('write fenced out', {
        workflowId: event.workflowId,
        heldEpoch: event.heldEpoch,
        currentEpoch: event.currentEpoch,
      });
    case 'workflow.failed':
      return logger.warn('workflow failed', { workflowId: event.workflowId, error: event.error });
    case 'workflow.corrupt':
      return logger.error('workflow corrupt', {
        workflowId: event.workflowId,
        key: event.key,
        message: event.message,
      });
    default:
      return;
  }
}
