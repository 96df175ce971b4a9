/**
 * The activity limits as a process that may not declare them sees them (the protocol's `activityLimits`,
 * `shuttle queue list`, `GET /activity-limits`).
 *
 * Activity limits are declared in code (`createEngine({ activityLimits })`) and are not written to the store,
 * unlike queues. What the store does hold are the durable slots of a group with `concurrency` under
 * `workflow-lease`: `act-slot:<group>:<i>`, one per attempt running now, each naming its engine and attempt.
 * So an engine that answers shows the groups it declares itself (`engine.activityLimits()`: limits, the
 * fleet's holders, who runs and waits here), and besides them every group it does not declare that has a slot
 * held now, read from those keys: its holders, but no limits (`declared: false`, `concurrency`/`perEngine`
 * null) and nothing about who waits (waiters are in the memory of the engines that wait). A group that no
 * engine holds a slot of right now, or that only has `perEngine` (kept in memory), is not seen there.
 *
 * A stored slot counts as held while its engine's session is live (not ended, not past `expiresAt + grace`),
 * the way the engine judges another engine's slot; this reader has no liveness oracle, so a crashed engine's
 * slot is shown until its session expires (the engines judge it free sooner when they have an oracle).
 */
import { decodeActivitySlot, type ActivityLimitInfo, type ActivitySlotHolder } from '../engine';
import { keys, unescapeId } from '../engine/keys';
import { decodeSession, isSessionLive, sessionKey } from '../engine/ownership/session';
import type { ActivityLimitView } from '../protocol';
import type { Storage } from '../storage/types';

/** The group a slot key belongs to (`act-slot:<escaped group>:<index>`), or null for a key of another shape. */
export function slotGroup(key: string): string | null {
  if (!key.startsWith(keys.activitySlotsPrefix)) return null;
  const rest = key.slice(keys.activitySlotsPrefix.length);
  const cut = rest.lastIndexOf(':');
  return cut <= 0 ? null : unescapeId(rest.slice(0, cut));
}

/**
 * Every activity slot held in the store now, by group, holders in the order they took their slots: a slot
 * counts while its engine's session is live at `now` (not ended, `now <= expiresAt + graceMs`).
 */
export async function readHeldActivitySlots(
  storage: Storage,
  now: number,
  graceMs: number,
): Promise<Map<string, ActivitySlotHolder[]>> {
  const entries = await storage.scan(keys.activitySlotsPrefix);
  const slots = entries.flatMap(({ key, value }) => {
    const group = slotGroup(key);
    const slot = decodeActivitySlot(value);
    return group === null || slot === null ? [] : [{ group, slot }];
  });
  const engineIds = [...new Set(slots.map(({ slot }) => slot.engineId))];
  const sessions = engineIds.length === 0 ? [] : await storage.getMany(engineIds.map((id) => sessionKey(id)));
  const live = new Set(
    engineIds.filter((_, i) => {
      const raw = sessions[i];
      return isSessionLive(raw ? decodeSession(raw) : null, now, graceMs);
    }),
  );
  const byGroup = new Map<string, ActivitySlotHolder[]>();
  for (const { group, slot } of slots) {
    if (!live.has(slot.engineId)) continue;
    const { engineId, workflowId, position, member, attempt, at } = slot;
    const holder: ActivitySlotHolder = { engineId, workflowId, position, member, attempt, since: at };
    byGroup.set(group, [...(byGroup.get(group) ?? []), holder]);
  }
  for (const holders of byGroup.values()) holders.sort((a, b) => a.since - b.since);
  return new Map([...byGroup].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The engine's declared groups (`declared: true`), then every other group with a slot held in the store
 * (`declared: false`: its holders only), by name.
 */
export function mergeActivityLimits(
  declared: readonly ActivityLimitInfo[],
  held: ReadonlyMap<string, ActivitySlotHolder[]>,
): ActivityLimitView[] {
  const names = new Set(declared.map((info) => info.name));
  const views: ActivityLimitView[] = [
    ...declared.map((info) => ({ ...info, declared: true })),
    ...[...held]
      .filter(([name]) => !names.has(name))
      .map(([name, running]) => ({
        name,
        concurrency: null,
        perEngine: null,
        running,
        runningHere: 0,
        waitingHere: 0,
        declared: false,
      })),
  ];
  return views.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What `activityLimits` answers: the engine's groups, and the store's held slots of the others. */
export async function activityLimitViews(
  declared: readonly ActivityLimitInfo[],
  storage: Storage | null,
  now: number,
  graceMs: number,
): Promise<ActivityLimitView[]> {
  const held = storage ? await readHeldActivitySlots(storage, now, graceMs) : new Map();
  return mergeActivityLimits(declared, held);
}
