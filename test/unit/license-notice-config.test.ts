import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

// LICENSE_EXPIRING_DAYS and LICENSE_EXPIRING_NOTICE_DAYS (docs/operations.md): read once, a bad
// value stopping the server before it listens, as every other setting.
const config = (env: Record<string, string>) =>
  loadConfig({ DATA_DIR: '/nonexistent', ...env }, false).licenses;

describe('renewal settings', () => {
  it('default to a 30-day horizon and notices at 30, 7 and 1 days', () => {
    expect(config({})).toEqual({ expiringDays: 30, noticeDays: [30, 7, 1] });
  });

  it('take a horizon, and notice days in any order, once each, or none', () => {
    expect(config({ LICENSE_EXPIRING_DAYS: '90' }).expiringDays).toBe(90);
    expect(config({ LICENSE_EXPIRING_NOTICE_DAYS: '1, 14,60,14' }).noticeDays).toEqual([60, 14, 1]);
    expect(config({ LICENSE_EXPIRING_NOTICE_DAYS: 'none' }).noticeDays).toEqual([]);
  });

  it('refuse what they cannot use, naming the variable', () => {
    expect(() => config({ LICENSE_EXPIRING_DAYS: '0' })).toThrow(/LICENSE_EXPIRING_DAYS/);
    for (const bad of ['30,0', '30;7', 'soon', '7,', '-1']) {
      expect(() => config({ LICENSE_EXPIRING_NOTICE_DAYS: bad }), bad).toThrow(
        /LICENSE_EXPIRING_NOTICE_DAYS/,
      );
    }
  });
});
