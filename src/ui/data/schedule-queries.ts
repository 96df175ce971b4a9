/**
 * Schedules: the list (every schedule of the store, with its next fire times and last slots), the live
 * preview of a cron in the New schedule form, and the mutations — create, pause, resume, trigger now,
 * delete. The list is live through the store-change pushes (live-updates.ts: the `schedules` area, and
 * workflow changes while the Schedules screen is shown); mutations refetch it at once.
 */
import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ScheduleInfo, ScheduleSpecInput } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import type { SchedulePreview } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { refreshChangedRows } from './list-rows';
import { queryKeys } from '../../public/react';

/** Every schedule of the store, by name. */
export function schedulesQuery(client: Pick<ShuttleClient, 'schedules'>) {
  return queryOptions<ScheduleInfo[]>({
    queryKey: queryKeys.schedules,
    queryFn: async () =>
      (await client.schedules()).sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true })),
  });
}

/** How many fire times the form previews. */
export const previewCount = 5;

/** The next fire times of `cron` in `timezone`, or the engine's reason for refusing it. */
export function schedulePreviewQuery(
  client: Pick<ShuttleClient, 'previewSchedule'>,
  cron: string,
  timezone: string,
) {
  return queryOptions<SchedulePreview>({
    queryKey: queryKeys.schedulePreview(cron, timezone),
    queryFn: () => client.previewSchedule(cron, { timezone, count: previewCount }),
    staleTime: 5_000,
    placeholderData: keepPreviousData,
  });
}

export function useSchedules() {
  return useQuery(schedulesQuery(useShuttleClient()));
}

/** The live preview, asked only while `enabled` (a cron was typed). */
export function useSchedulePreview(cron: string, timezone: string, enabled: boolean) {
  return useQuery({ ...schedulePreviewQuery(useShuttleClient(), cron, timezone), enabled });
}

export type CreateScheduleRequest = { name: string; spec: ScheduleSpecInput; replace?: boolean };

/** Creates (or, with `replace`, replaces) a schedule; resolves with it as stored. */
export function useCreateSchedule() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, spec, replace }: CreateScheduleRequest) =>
      client.schedule(name, spec, replace === undefined ? {} : { replace }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: queryKeys.schedules }),
  });
}

/** An action on one schedule, as the Schedules screen offers it. */
export type ScheduleAction = 'pause' | 'resume' | 'trigger' | 'delete';

/** Runs a `ScheduleAction`; `trigger` resolves with the workflow it started. */
export function useScheduleAction(name: string) {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (action: ScheduleAction): Promise<{ workflowId: string; run: number } | null> => {
      switch (action) {
        case 'pause':
          await client.pauseSchedule(name);
          return null;
        case 'resume':
          await client.resumeSchedule(name);
          return null;
        case 'trigger':
          return client.triggerSchedule(name);
        case 'delete':
          await client.deleteSchedule(name);
          return null;
      }
    },
    onSuccess: (started) => {
      if (started)
        void refreshChangedRows(client, queryClient, [started.workflowId], { lists: true, claims: true });
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.schedules }),
  });
}
