/**
 * Shuttle's engine: its API for the rest of this repository. It is the public API (public-api.ts, which
 * the package's `shuttle` entry point exports) and what only the host, the studio and the tests use besides:
 * stored-key descriptions, vocabulary lists, cron previews, an in-memory liveness oracle, the next timer due (the
 * test kit's time skipping). Nothing else in
 * `src/engine` is imported from outside it. See docs/engine.md and docs/ownership.md for the contract.
 */
export * from './public-api';
export { checkPayloadCodec } from './payload-codec';
export { describeCommand } from './workflow';
export { InMemoryLiveness } from './ownership/liveness';
export { timelineKinds } from './vocabulary';
export { scheduleCatchUps, scheduleOverlaps } from './schedules/records';
export { acceptedCronForm, previewCron } from './schedules/cron';
export type { StoredKeyKind } from './keys';
export { describeStoredKey, hostKeys } from './keys';
export { nextTimerDue } from './timer-scheduler';
export { decodeActivitySlot } from './activity-limits';
