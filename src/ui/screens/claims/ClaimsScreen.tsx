/**
 * Every claim holder record of the database, live: the workflow, the engine holding it, its epoch, when it
 * was claimed, how long it has left (a bar draining to the expiry, refilled at each renewal) and how long
 * ago it was renewed. Contested claims (the epoch rose recently) and expired claims nobody has taken over
 * yet stand out and sort first. Selecting a row shows that workflow's epoch history, from its timeline.
 */
import { MiddleTruncate } from '../../components/MiddleTruncate';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import type { EngineRecord } from '../../../public/browser';
import { DrainingBar } from '../../components/DrainingBar';
import { EmptyState } from '../../components/EmptyState';
import { EngineTag } from '../../components/EngineTag';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { RelativeTime } from '../../components/RelativeTime';
import { formatAbsolute, formatClock, formatDuration } from '../../components/time-format';
import { claimTimings, useClaims, useEngineDirectory } from '../../data/engine-queries';
import { useWorkflowTimeline } from '../../data/workflow-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { useNow } from '../../state/now';
import { epochHistory } from '../../components/custody';
import styles from './ClaimsScreen.module.css';
import { sortClaimRows, toClaimRows, type ClaimRow } from './claim-rows';
import { ScreenHeader } from '../../components/ScreenHeader';

const rowHeight = 45;

export function ClaimsScreen() {
  const claims = useClaims();
  const engines = useEngineDirectory();
  const now = useNow();
  const [selected, setSelected] = useState<string | null>(null);
  const rows = useMemo(
    () => sortClaimRows(toClaimRows(claims.data ?? [], now, claimTimings.ttlMs)),
    [claims.data, now],
  );
  const contested = rows.filter((row) => row.contested).length;
  const expired = rows.filter((row) => row.expired).length;
  const selectedId =
    selected ?? rows.find((row) => row.contested || row.expired)?.workflowId ?? rows[0]?.workflowId ?? null;
  return (
    <section className={styles.screen} aria-labelledby="claims-title">
      <ScreenHeader
        titleId="claims-title"
        title="Claims"
        summary={
          claims.data
            ? `${rows.length} held · ${contested} contested · ${expired} expired and not yet taken over · TTL ${formatDuration(claimTimings.ttlMs)}, renewed every ${formatDuration(claimTimings.renewIntervalMs)}`
            : 'Who holds which workflow, at which epoch.'
        }
        summaryTestId="claims.summary"
      />
      {claims.isError && !claims.data ? (
        <ErrorNotice
          error={claims.error}
          title="Could not read the claims"
          onRetry={() => void claims.refetch()}
        />
      ) : (
        <div className={styles.layout}>
          <div className={`${styles.card} ${styles.tableCard}`}>
            <div className={styles.table} role="table" aria-label="Claims" data-testid="claims.table">
              <div className={`${styles.row} ${styles.head}`} role="row">
                <div role="columnheader">Workflow</div>
                <div role="columnheader">Holder</div>
                <div role="columnheader" className={styles.numeric}>
                  Epoch
                </div>
                <div role="columnheader">Claimed</div>
                <div role="columnheader">Expires</div>
                <div role="columnheader">Renewed</div>
              </div>
              {!claims.data ? (
                <EmptyState compact title="Loading claims…" />
              ) : rows.length === 0 ? (
                <EmptyState icon="claims" title="No claims held" testId="claims.empty">
                  An engine holds a claim on each workflow it runs. Start a workflow and its claim appears
                  here, renewed every second.
                </EmptyState>
              ) : (
                <ClaimRows rows={rows} engines={engines} selectedId={selectedId} onSelect={setSelected} />
              )}
            </div>
          </div>
          <PanelErrorBoundary name="epoch history">
            {/* a section (a region), not an aside: a complementary landmark may not sit inside <main> */}
            <section className={`${styles.card} ${styles.history}`} aria-label="Epoch history">
              {selectedId ? (
                <EpochHistory workflowId={selectedId} engines={engines} />
              ) : (
                <EmptyState compact title="Select a claim" />
              )}
            </section>
          </PanelErrorBoundary>
        </div>
      )}
    </section>
  );
}

function ClaimRows({
  rows,
  engines,
  selectedId,
  onSelect,
}: {
  rows: ClaimRow[];
  engines: ReadonlyMap<string, EngineRecord>;
  selectedId: string | null;
  onSelect: (id: string) => void;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // TanStack Virtual re-renders the rows on scroll by design; the compiler's memoisation is not needed here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 10,
  });
  return (
    <div ref={scrollRef} className={styles.body} role="rowgroup">
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((virtual) => {
          const row = rows[virtual.index]!;
          const holder = row.claim.holder;
          const selected = row.workflowId === selectedId;
          return (
            <div
              key={row.workflowId}
              role="row"
              className={`${styles.row} ${styles.bodyRow} ${row.expired ? styles.expired : row.contested ? styles.contested : ''} ${selected ? styles.selected : ''}`}
              style={{ transform: `translateY(${virtual.start}px)` }}
              onClick={() => onSelect(row.workflowId)}
              data-testid="claims.row"
              data-workflow-id={row.workflowId}
              data-contested={row.contested || undefined}
              data-expired={row.expired || undefined}
              aria-selected={selected}
            >
              <ClaimCells row={row} holder={holder} engines={engines} />
            </div>
          );
        })}
      </div>
    </div>
  );
}

function ClaimCells({
  row,
  holder,
  engines,
}: {
  row: ClaimRow;
  holder: ClaimRow['claim']['holder'];
  engines: ReadonlyMap<string, EngineRecord>;
}) {
  return (
    <>
      <div role="cell" className={styles.workflowCell}>
        <Link to={routes.workflow(row.workflowId)} className={styles.id} title={row.workflowId}>
          <MiddleTruncate text={row.workflowId} />
        </Link>
        {row.expired ? (
          <span
            className={`${styles.flag} ${styles.flagExpired}`}
            title="The claim ran out and no engine has taken the workflow over yet"
          >
            {row.claim.holderCorrupt ? 'undecodable holder' : 'expired, unclaimed'}
          </span>
        ) : row.contested ? (
          <span
            className={`${styles.flag} ${styles.flagContested}`}
            title="Its epoch rose within the last minute: the workflow changed hands"
          >
            contested
          </span>
        ) : null}
      </div>
      <div role="cell" data-testid="claims.row-engine">
        {holder ? (
          <EngineTag engineId={holder.engineId} engine={engines.get(holder.engineId)} />
        ) : (
          <span className={styles.muted}>—</span>
        )}
      </div>
      <div role="cell" className={styles.numeric} data-testid="claims.row-epoch">
        {row.claim.epoch ?? holder?.epoch ?? '—'}
      </div>
      <div role="cell" className={styles.muted}>
        {holder ? <RelativeTime at={holder.claimedAt} /> : '—'}
      </div>
      <div role="cell">
        {holder ? <DrainingBar expiresAt={holder.expiresAt} totalMs={claimTimings.ttlMs} /> : '—'}
      </div>
      <div
        role="cell"
        className={`${styles.muted} ${styles.tabular}`}
        title={holder ? `Expires ${formatAbsolute(holder.expiresAt)}` : undefined}
      >
        {row.renewAgeMs !== null
          ? `${formatDuration(row.renewAgeMs, { coarse: row.renewAgeMs >= 10_000 })} ago`
          : '—'}
      </div>
    </>
  );
}

function EpochHistory({
  workflowId,
  engines,
}: {
  workflowId: string;
  engines: ReadonlyMap<string, EngineRecord>;
}) {
  const timeline = useWorkflowTimeline(workflowId);
  const steps = useMemo(() => epochHistory(timeline.data ?? []), [timeline.data]);
  return (
    <div className={styles.history} data-testid="claims.epoch-history" data-workflow-id={workflowId}>
      <h2 className={styles.historyTitle}>Epoch history</h2>
      <Link to={routes.workflow(workflowId)} className={styles.historyId}>
        {workflowId}
      </Link>
      {timeline.isError ? <ErrorNotice error={timeline.error} title="Could not read its timeline" /> : null}
      {!timeline.data ? (
        <p className={styles.muted}>Loading…</p>
      ) : steps.length === 0 ? (
        <p className={styles.muted}>No claim was ever recorded for it.</p>
      ) : (
        <ol className={styles.steps}>
          {steps.map((step) => {
            const engine = step.engineId ? engines.get(step.engineId) : undefined;
            return (
              <li key={`${step.epoch}-${step.at}`} className={styles.step} data-testid="claims.epoch-step">
                <span className={styles.epochBadge}>e{step.epoch}</span>
                <div className={styles.stepBody}>
                  {step.engineId ? (
                    <EngineTag engineId={step.engineId} engine={engine} />
                  ) : (
                    <span className={styles.muted}>no owner</span>
                  )}
                  <span className={styles.how}>
                    {step.how} · <time title={formatAbsolute(step.at)}>{formatClock(step.at)}</time>
                  </span>
                </div>
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}
