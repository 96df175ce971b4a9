import { describe, expect, it } from 'vitest';
import { describeFilters } from './describe-filters';

describe('describeFilters', () => {
  it('says every workflow when nothing filters', () => {
    expect(describeFilters({ status: [], type: null, owner: null, idPrefix: '' })).toBe(
      'the list (no filter: every workflow)',
    );
  });
  it('names every filter', () => {
    expect(
      describeFilters({
        status: ['running', 'pending'],
        type: 'countdown',
        owner: 'none',
        idPrefix: 'drill',
      }),
    ).toBe('the filter (status running or pending · type countdown · owned by nobody · id starting “drill”)');
  });
  it('names the text search and the time range', () => {
    expect(
      describeFilters({ status: [], type: null, owner: null, idPrefix: '', text: ' declined ', since: '1h' }),
    ).toBe('the filter (containing “declined” · started in the last hour)');
  });
});
