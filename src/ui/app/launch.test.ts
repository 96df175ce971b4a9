import { describe, expect, it } from 'vitest';
import { isServedByServer, readStudioConfig } from './launch';

describe("the studio's URL options", () => {
  it.each([
    ['', { databaseName: 'shuttle', viewer: false }],
    ['?db=demo', { databaseName: 'demo', viewer: false }],
    ['?db=%20spaced%20&engine=off', { databaseName: 'spaced', viewer: true }],
    ['?db=&engine=on', { databaseName: 'shuttle', viewer: false }],
    [`?db=${'x'.repeat(201)}`, { databaseName: 'shuttle', viewer: false }],
  ])('%j gives %j (an invalid value falls back to the default)', (search, config) => {
    expect(readStudioConfig(search)).toEqual(config);
  });

  it('a page served by shuttle serve says so in a meta tag', () => {
    const doc = (found: boolean) => ({ querySelector: () => (found ? ({} as Element) : null) });
    expect(isServedByServer(doc(true))).toBe(true);
    expect(isServedByServer(doc(false))).toBe(false);
  });
});
