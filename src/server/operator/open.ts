/**
 * How an operator command reaches the fleet: the store the flags name, and an observer engine on it.
 *
 * The engine never claims or runs a workflow (`claimWorkflows: false`) and recovers nothing; it opens no
 * session and writes no presence record. Definitions are loaded only when the command gives `--workflows`
 * or `--demos` (`workflow start` checks its input against them); every other command works on any store.
 */
import { createEngine } from '../../engine';
import { readEngineDirectory } from '../../host/engine-directory';
import { activityLimitViews } from '../../host/activity-slots';
import { readPresence } from '../../host/presence';
import { hostClaimTimings } from '../../protocol';
import { loadCodecModule } from '../codec-module';
import { loadDefinitions } from '../definitions';
import { openStore } from '../store';
import { MemoryStorage } from '../../storage/memory';
import type { OperatorIo, StoreFlags } from './operator';

export const openForOperator: OperatorIo['open'] = async (flags: StoreFlags) => {
  const loaded =
    flags.workflows.length > 0 || flags.demos ? await loadDefinitions(flags.workflows, flags.demos) : null;
  const definitions = loaded?.workflows ?? [];
  // `workflow start --queue` goes onto a queue the modules declare, as the workers declare it. (A workflow
  // whose queue no given module declares is refused by the engine if it is started, not here: replay and the
  // other commands do not need its queue.)
  const queues = loaded?.queues ?? [];
  const store = flags.memory
    ? { storage: new MemoryStorage(), close: async () => undefined }
    : await openStore(flags);
  try {
    const engine = await createEngine({
      storage: store.storage,
      ...(flags.codec ? { codec: await loadCodecModule(flags.codec) } : {}),
      workflows: definitions,
      ...(queues.length > 0 ? { queues } : {}),
      ownership: 'workflow-lease',
      workflowClaimTtlMs: hostClaimTimings.ttlMs,
      workflowClaimRenewIntervalMs: hostClaimTimings.renewIntervalMs,
      claimWorkflows: false,
      recover: false,
    });
    return {
      engine,
      // Live presence first, then the engine directory (engines long gone keep their names there).
      labels: async () => {
        const [directory, presence] = await Promise.all([
          readEngineDirectory(store.storage),
          readPresence(store.storage),
        ]);
        return new Map([
          ...directory.map((entry) => [entry.engineId, entry.label] as const),
          ...presence.map((engine) => [engine.engineId, engine.label] as const),
        ]);
      },
      // Activity limits are not stored: the groups this engine declares (none, unless given in code) and the
      // slots the fleet holds now, read from the store.
      activityLimits: async () =>
        activityLimitViews(
          await engine.activityLimits(),
          store.storage,
          Date.now(),
          hostClaimTimings.graceMs,
        ),
      close: async () => {
        await engine.shutdown().catch(() => undefined);
        await store.close();
      },
    };
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
};
