/**
 * How much room the store takes, on the Engines screen beside the engines that share it: bytes used, the
 * quota and the share of it when the store has one (the browser's, for this origin), the largest parts
 * (PostgreSQL tables, or key areas), and what was measured. Refreshed on demand and after every purge.
 */
import { Button } from '../../components/Button';
import { InlineError } from '../../components/ErrorNotice';
import { useStorageUsage } from '../../data/storage-queries';
import { formatBytes } from '../../components/byte-format';
import { largestParts, quotaShare } from './storage-view';
import styles from './EnginesScreen.module.css';
import storage from './StorageCard.module.css';

export function StorageCard() {
  const usage = useStorageUsage();
  const data = usage.data;
  const share = data ? quotaShare(data) : null;
  const parts = data ? largestParts(data) : [];
  return (
    <section className={styles.card} aria-labelledby="storage-title" data-testid="engines.storage">
      <div className={styles.cardHead}>
        <h2 className={styles.cardTitle} id="storage-title">
          Storage
        </h2>
        <span className={styles.cardHint} data-testid="engines.storage-source">
          {data?.source ?? 'What the store takes'}
        </span>
        <span className={storage.spacer} />
        <Button
          size="sm"
          variant="ghost"
          icon="refresh"
          busy={usage.isFetching}
          onClick={() => void usage.refetch()}
          testId="engines.storage-refresh"
        >
          Refresh
        </Button>
      </div>
      {usage.isError && !data ? (
        <InlineError error={usage.error} testId="engines.storage-error" />
      ) : !data ? (
        <p className={storage.muted}>Measuring…</p>
      ) : (
        <div className={`${storage.body} ${parts.length === 0 ? storage.single : ''}`}>
          <div className={storage.total}>
            <span className={storage.bytes} data-testid="engines.storage-bytes" data-bytes={data.bytes}>
              {formatBytes(data.bytes)}
            </span>
            <span className={storage.muted}>
              used
              {data.quotaBytes ? (
                <>
                  {' '}
                  of {formatBytes(data.quotaBytes)} quota ·{' '}
                  <strong data-testid="engines.storage-share">{share}</strong>
                </>
              ) : null}
            </span>
            {data.quotaBytes ? (
              <span className={storage.meter} aria-hidden>
                <span
                  className={storage.fill}
                  style={{ width: `${Math.min(100, Math.max(0.5, (data.bytes / data.quotaBytes) * 100))}%` }}
                />
              </span>
            ) : null}
          </div>
          {parts.length > 0 ? (
            <table className={storage.parts} data-testid="engines.storage-parts">
              <caption className="visually-hidden">Largest parts of the store</caption>
              <thead>
                <tr>
                  <th scope="col">Largest parts</th>
                  <th scope="col" className={storage.number}>
                    Size
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Share</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {parts.map((part) => (
                  <tr key={part.name}>
                    <td className={storage.partName}>{part.name}</td>
                    <td className={storage.number}>{formatBytes(part.bytes)}</td>
                    <td className={storage.shareCell}>
                      <span
                        className={storage.partBar}
                        style={{ width: `${Math.max(1, part.share * 100)}%` }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </div>
      )}
    </section>
  );
}
