import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

// The pool, the silence bound and the event-loop budget (docs/operations.md, "Connections and
// overload"): their defaults, and values refused before the server listens.
describe('connection and overload settings', () => {
  it('defaults to a pool of 10 waited on 5 s, a silence bound of 5 s, and an event-loop budget of 2 s', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x' });
    expect(config.database).toEqual({ poolSize: 10, poolWaitMs: 5000, silenceMs: 5000 });
    expect(config.eventLoopDelayLimitMs).toBe(2000);
  });

  it('leaves the event-loop check off on the embedded database unless it is set', () => {
    expect(loadConfig({}).eventLoopDelayLimitMs).toBe(0);
    expect(loadConfig({ EVENT_LOOP_DELAY_LIMIT_MS: '1500' }).eventLoopDelayLimitMs).toBe(1500);
  });

  it('reads each from its variable, 0 turning the event-loop check off', () => {
    const config = loadConfig({
      DATABASE_POOL_SIZE: '40',
      DATABASE_POOL_WAIT_MS: '1500',
      DATABASE_SILENCE_MS: '3000',
      EVENT_LOOP_DELAY_LIMIT_MS: '0',
    });
    expect(config.database).toEqual({ poolSize: 40, poolWaitMs: 1500, silenceMs: 3000 });
    expect(config.eventLoopDelayLimitMs).toBe(0);
  });

  it('refuses a pool of none, a silence bound under a second, and what is not a whole number', () => {
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(
      /DATABASE_POOL_SIZE must be a whole number of at least 1/,
    );
    expect(() => loadConfig({ DATABASE_SILENCE_MS: '500' })).toThrow(
      /DATABASE_SILENCE_MS must be a whole number of at least 1000/,
    );
    expect(() => loadConfig({ DATABASE_POOL_WAIT_MS: '5s' })).toThrow(/DATABASE_POOL_WAIT_MS/);
    expect(() => loadConfig({ EVENT_LOOP_DELAY_LIMIT_MS: '-1' })).toThrow(/EVENT_LOOP_DELAY_LIMIT_MS/);
  });
});
