import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { timeFilter } from '../../src/cli/time-filter.js';

const NOW = Date.parse('2026-03-10T12:00:00.000Z');

describe('keyward audit --since / --until', () => {
  it('turns a time ago into the instant it names, in UTC', () => {
    expect(timeFilter('90s', NOW)).toBe('2026-03-10T11:58:30.000Z');
    expect(timeFilter('15m', NOW)).toBe('2026-03-10T11:45:00.000Z');
    expect(timeFilter('2h', NOW)).toBe('2026-03-10T10:00:00.000Z');
    expect(timeFilter('7d', NOW)).toBe('2026-03-03T12:00:00.000Z');
    expect(timeFilter('2w', NOW)).toBe('2026-02-24T12:00:00.000Z');
  });

  it('passes an ISO-8601 date or date-time on as ISO-8601 in UTC', () => {
    expect(timeFilter('2026-01-31T12:00:00Z', NOW)).toBe('2026-01-31T12:00:00.000Z');
    expect(timeFilter('2026-01-31T12:00:00+08:00', NOW)).toBe('2026-01-31T04:00:00.000Z');
    expect(timeFilter('2026-01-31T12:00:00.250-0130', NOW)).toBe('2026-01-31T13:30:00.250Z');
    expect(timeFilter('2026-01-31', NOW)).toBe('2026-01-31T00:00:00.000Z');
    // No zone: the local time of whoever runs the command, as Date reads it.
    expect(timeFilter('2026-01-31T12:00', NOW)).toBe(new Date(2026, 0, 31, 12, 0).toISOString());
  });

  it('refuses anything else with a message that shows both forms', () => {
    for (const bad of [
      'yesterday',
      '15',
      'm15',
      '15 minutes',
      '1.5h',
      '-2h',
      '31/01/2026',
      '2026-01-31T12',
      '',
    ]) {
      expect(() => timeFilter(bad, NOW), bad).toThrow(InvalidArgumentError);
    }
    expect(() => timeFilter('soon', NOW)).toThrow(/ISO-8601 .*15m, 2h, 7d/);
  });
});
