/**
 * The studio's icons: small inline SVGs drawn with `currentColor`, so they follow the text colour in every
 * theme. Decorative by default (`aria-hidden`); the control around an icon carries the label.
 */
import type { ReactElement } from 'react';

export type IconName =
  | 'workflows'
  | 'engines'
  | 'claims'
  | 'waiters'
  | 'schedules'
  | 'queues'
  | 'chaos'
  | 'search'
  | 'plus'
  | 'external'
  | 'sun'
  | 'moon'
  | 'monitor'
  | 'play'
  | 'chevron-right'
  | 'chevron-down'
  | 'close'
  | 'download'
  | 'snowflake'
  | 'bolt'
  | 'power'
  | 'refresh'
  | 'arrow-up'
  | 'arrow-down'
  | 'check'
  | 'cross'
  | 'hourglass'
  | 'command'
  | 'code'
  | 'file'
  | 'lock'
  | 'copy'
  | 'save'
  | 'trash'
  | 'pencil'
  | 'alert';

const paths: Record<IconName, ReactElement> = {
  workflows: (
    <>
      <rect x="2" y="2.5" width="12" height="3" rx="1" />
      <rect x="2" y="6.5" width="12" height="3" rx="1" />
      <rect x="2" y="10.5" width="7" height="3" rx="1" />
    </>
  ),
  engines: (
    <>
      <rect x="2" y="2.5" width="12" height="4.5" rx="1.2" />
      <rect x="2" y="9" width="12" height="4.5" rx="1.2" />
      <path d="M4.5 4.75h.01M4.5 11.25h.01" strokeWidth="2" strokeLinecap="round" />
    </>
  ),
  claims: (
    <>
      <path d="M8 1.8l5 2v3.7c0 3-2.2 5.4-5 6.7-2.8-1.3-5-3.7-5-6.7V3.8z" />
      <path d="M6 8l1.5 1.5L10.5 6.5" />
    </>
  ),
  waiters: (
    <>
      <circle cx="8" cy="8" r="6" />
      <path d="M8 4.5V8l2.5 1.5" />
    </>
  ),
  schedules: (
    <>
      <rect x="2" y="3" width="12" height="11" rx="1.5" />
      <path d="M2 6.5h12M5.2 1.8v2.4M10.8 1.8v2.4" />
      <path d="M8 8.6v2.1l1.5 1" />
    </>
  ),
  // Three waiting in line, one through the gate.
  queues: (
    <>
      <path d="M11 2v12" />
      <rect x="12.5" y="6.5" width="2" height="3" rx="0.6" />
      <rect x="1.5" y="6.5" width="2" height="3" rx="0.6" />
      <rect x="4.5" y="6.5" width="2" height="3" rx="0.6" />
      <rect x="7.5" y="6.5" width="2" height="3" rx="0.6" />
    </>
  ),
  chaos: <path d="M9 1.5L3.5 9H8l-1 5.5L12.5 7H8z" />,
  search: (
    <>
      <circle cx="7" cy="7" r="4.5" />
      <path d="M10.5 10.5L14 14" />
    </>
  ),
  plus: <path d="M8 3v10M3 8h10" />,
  external: (
    <>
      <path d="M9 2.5h4.5V7" />
      <path d="M13.5 2.5L7.5 8.5" />
      <path d="M11.5 9.5v3a1 1 0 0 1-1 1h-7a1 1 0 0 1-1-1v-7a1 1 0 0 1 1-1h3" />
    </>
  ),
  sun: (
    <>
      <circle cx="8" cy="8" r="3" />
      <path d="M8 1.5v1.5M8 13v1.5M1.5 8H3M13 8h1.5M3.4 3.4l1 1M11.6 11.6l1 1M3.4 12.6l1-1M11.6 4.4l1-1" />
    </>
  ),
  moon: <path d="M13.5 9.5A5.5 5.5 0 0 1 6.5 2.5a5.5 5.5 0 1 0 7 7z" />,
  monitor: (
    <>
      <rect x="1.5" y="2.5" width="13" height="8.5" rx="1.2" />
      <path d="M5.5 14h5M8 11v3" />
    </>
  ),
  play: <path d="M4.5 2.8l8.5 5.2-8.5 5.2z" fill="currentColor" />,
  'chevron-right': <path d="M6 3.5L10.5 8 6 12.5" />,
  'chevron-down': <path d="M3.5 6L8 10.5 12.5 6" />,
  close: <path d="M4 4l8 8M12 4l-8 8" />,
  download: (
    <>
      <path d="M8 2v8M4.5 6.8L8 10.3l3.5-3.5" />
      <path d="M2.5 12.5v1h11v-1" />
    </>
  ),
  snowflake: (
    <path d="M8 1.5v13M2.4 4.75l11.2 6.5M2.4 11.25l11.2-6.5M6.2 2.8L8 4.3l1.8-1.5M6.2 13.2L8 11.7l1.8 1.5" />
  ),
  bolt: <path d="M9 1.5L3.5 9H8l-1 5.5L12.5 7H8z" />,
  power: (
    <>
      <path d="M8 1.8v6" />
      <path d="M4.6 4.2a5 5 0 1 0 6.8 0" />
    </>
  ),
  refresh: (
    <>
      <path d="M13 3.5v3.2H9.8" />
      <path d="M12.6 6.5A5 5 0 1 0 13 9.5" />
    </>
  ),
  'arrow-up': <path d="M8 13V3M4 7l4-4 4 4" />,
  'arrow-down': <path d="M8 3v10M4 9l4 4 4-4" />,
  check: <path d="M3 8.5l3.2 3.2L13 4.8" />,
  cross: <path d="M4 4l8 8M12 4l-8 8" />,
  hourglass: (
    <>
      <path d="M4 1.8h8M4 14.2h8" />
      <path d="M5 1.8c0 3 6 3.4 6 6.2s-6 3.2-6 6.2M11 1.8c0 3-6 3.4-6 6.2s6 3.2 6 6.2" />
    </>
  ),
  code: <path d="M5.5 4L1.8 8l3.7 4M10.5 4l3.7 4-3.7 4M9.2 2.5L6.8 13.5" />,
  file: (
    <>
      <path d="M9.2 1.8H4a1 1 0 0 0-1 1v10.4a1 1 0 0 0 1 1h8a1 1 0 0 0 1-1V5.6z" />
      <path d="M9.2 1.8v3.8H13" />
    </>
  ),
  lock: (
    <>
      <rect x="3" y="7" width="10" height="7" rx="1.2" />
      <path d="M5.2 7V5a2.8 2.8 0 0 1 5.6 0v2" />
    </>
  ),
  copy: (
    <>
      <rect x="5.5" y="5.5" width="8" height="8.5" rx="1.2" />
      <path d="M10.5 5.5V3a1 1 0 0 0-1-1h-6a1 1 0 0 0-1 1v7a1 1 0 0 0 1 1h2" />
    </>
  ),
  save: (
    <>
      <path d="M3 2h8.2L14 4.8V13a1 1 0 0 1-1 1H3a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1z" />
      <path d="M5 2v3.5h5V2M5 14V9.5h6V14" />
    </>
  ),
  trash: (
    <>
      <path d="M2.5 4h11M6 4V2.5h4V4" />
      <path d="M3.8 4l.7 9.2a1 1 0 0 0 1 .9h5a1 1 0 0 0 1-.9l.7-9.2M6.5 6.8v4.5M9.5 6.8v4.5" />
    </>
  ),
  pencil: <path d="M10.8 2.4l2.8 2.8-8.2 8.2H2.6v-2.8zM9.2 4l2.8 2.8" />,
  alert: (
    <>
      <path d="M8 1.8l6.5 11.7h-13z" />
      <path d="M8 6.2v3.4M8 11.7h.01" />
    </>
  ),
  command: (
    <path d="M6 6V4.5A1.5 1.5 0 1 0 4.5 6H6zm0 0h4m-4 0v4m4-4V4.5A1.5 1.5 0 1 1 11.5 6H10zm0 0v4m0 0h1.5A1.5 1.5 0 1 1 10 11.5V10zm0 0H6m0 0v1.5A1.5 1.5 0 1 1 4.5 10H6z" />
  ),
};

export type IconProps = { name: IconName; size?: number; className?: string; title?: string };

export function Icon({ name, size = 16, className, title }: IconProps) {
  return (
    <svg
      viewBox="0 0 16 16"
      width={size}
      height={size}
      className={className}
      fill="none"
      stroke="currentColor"
      strokeWidth="1.5"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden={title ? undefined : true}
      role={title ? 'img' : undefined}
      focusable="false"
    >
      {title ? <title>{title}</title> : null}
      {paths[name]}
    </svg>
  );
}
