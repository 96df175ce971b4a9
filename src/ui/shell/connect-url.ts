/**
 * "Connect to server…": what a person types (the URL `shuttle serve` or `shuttle dev` printed, with its
 * token, or just `host:port`) turned into the address to open, or why it cannot be opened. Pure.
 */
export type ConnectTarget = { ok: true; url: string } | { ok: false; problem: string };

export function parseServerUrl(text: string): ConnectTarget {
  const trimmed = text.trim();
  if (!trimmed) return { ok: false, problem: 'Paste the URL that shuttle serve (or shuttle dev) printed.' };
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return { ok: false, problem: `“${trimmed}” is not a URL.` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, problem: `A studio server is reached over http or https, not ${url.protocol}` };
  if (!url.hostname) return { ok: false, problem: 'The URL names no host.' };
  return { ok: true, url: url.toString() };
}

/** Whether the URL carries the token the server printed (without it, the server answers 401). */
export function hasToken(url: string): boolean {
  try {
    return new URL(url).searchParams.has('token');
  } catch {
    return false;
  }
}
