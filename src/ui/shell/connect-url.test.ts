import { describe, expect, it } from 'vitest';
import { hasToken, parseServerUrl } from './connect-url';

describe('parseServerUrl', () => {
  it('accepts the printed URL as it is', () => {
    expect(parseServerUrl(' http://127.0.0.1:7400/?token=abc ')).toEqual({
      ok: true,
      url: 'http://127.0.0.1:7400/?token=abc',
    });
  });
  it('adds http:// to host:port', () => {
    expect(parseServerUrl('localhost:7300')).toEqual({ ok: true, url: 'http://localhost:7300/' });
  });
  it('refuses empty text, non-URLs and other schemes with a reason', () => {
    expect(parseServerUrl('')).toMatchObject({ ok: false });
    expect(parseServerUrl('http://')).toMatchObject({ ok: false });
    expect(parseServerUrl('ftp://host/')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('ftp:'),
    });
  });
  it('tells whether the token is there', () => {
    expect(hasToken('http://h:1/?token=x')).toBe(true);
    expect(hasToken('http://h:1/')).toBe(false);
  });
});
