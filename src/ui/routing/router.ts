/**
 * The current route, read from `location.hash` and kept in step with it. Navigating writes the hash, so the
 * browser's back and forward buttons, reloads and copied links all work; replacing (for filter edits as a
 * person types) does not pile up history entries. The hash itself is the store — components subscribe to
 * `hashchange` — so no copy of the route can fall out of step with the address bar.
 */
import { useSyncExternalStore } from 'react';
import { formatRoute, parseRoute, type Route } from './route';

function subscribe(onChange: () => void): () => void {
  addEventListener('hashchange', onChange);
  return () => removeEventListener('hashchange', onChange);
}

let cachedHash: string | null = null;
let cachedRoute: Route | null = null;

/** The route of the current hash; the same object until the hash changes. */
export function currentRoute(): Route {
  if (cachedHash !== location.hash || !cachedRoute) {
    cachedHash = location.hash;
    cachedRoute = parseRoute(location.hash);
  }
  return cachedRoute;
}

/** The current route; re-renders when it changes. */
export function useRoute(): Route {
  return useSyncExternalStore(subscribe, currentRoute);
}

/** Goes to `route`. `replace` rewrites the current history entry instead of adding one. */
export function navigate(route: Route, options: { replace?: boolean } = {}): void {
  const hash = formatRoute(route);
  if (hash === location.hash) return;
  if (options.replace) {
    history.replaceState(history.state, '', `${location.pathname}${location.search}${hash}`);
    dispatchEvent(new HashChangeEvent('hashchange'));
  } else location.hash = hash;
}

/** The `href` of a route, for real links (middle-click opens a new tab, which is a new engine). */
export function hrefOf(route: Route): string {
  return `${location.pathname}${location.search}${formatRoute(route)}`;
}
