/**
 * A link to a studio route: a real `<a href>` (copyable, opens in a new tab with a modifier key), handled in
 * place on a plain click.
 */
import type { MouseEvent, ReactNode } from 'react';
import type { Route } from './route';
import { hrefOf, navigate } from './router';

export type LinkProps = {
  to: Route;
  children: ReactNode;
  className?: string;
  title?: string;
  testId?: string;
  /** `data-*` attributes, for page objects (`{ name: 'x' }` → `data-name="x"`). */
  data?: Readonly<Record<string, string>>;
  'aria-current'?: 'page' | undefined;
};

export function Link({ to, children, className, title, testId, data, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a
      href={hrefOf(to)}
      onClick={onClick}
      className={className}
      title={title}
      data-testid={testId}
      aria-current={rest['aria-current']}
      {...Object.fromEntries(Object.entries(data ?? {}).map(([key, value]) => [`data-${key}`, value]))}
    >
      {children}
    </a>
  );
}
