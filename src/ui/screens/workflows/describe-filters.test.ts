import { describe, expect, it } from 'vitest';
import { bulkCountWords, describeFilters } from './describe-filters';

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

describe('bulkCountWords', () => {
  it('counts what matches, and says when more match than one confirmation acts on', () => {
    expect(bulkCountWords(0, 10_000, 'unfinished', 'the list')).toBe(
      'No unfinished workflow matches the list: nothing to do.',
    );
    expect(bulkCountWords(1, 10_000, 'unfinished', 'the list')).toBe(
      '1 unfinished workflow matches the list.',
    );
    expect(bulkCountWords(10_000, 10_000, 'unfinished', 'the list')).toBe(
      '10,000 unfinished workflows match the list.',
    );
    expect(bulkCountWords(10_001, 10_000, 'running or pending', 'the list')).toMatch(
      /^More than 10,000 running or pending workflows match the list\. One confirmation acts on at most 10,000: these are the first 10,000/,
    );
  });
});
