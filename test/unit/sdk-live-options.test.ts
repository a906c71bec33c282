import { describe, expect, it } from 'vitest';
import { optionsFrom } from '../../scripts/sdk-live.js';

// The live driver's server port is the caller's to choose: --port, else SDK_LIVE_PORT, else 0.
describe('sdk-live options', () => {
  const scenario = ['--scenario', 'c=bash sdks/c/tests/live_scenario.sh'];

  it('lets the system choose the port unless told', () => {
    expect(optionsFrom(scenario).port).toBe(0);
    expect(optionsFrom(scenario).scenarios).toEqual([
      { name: 'c', command: ['bash', 'sdks/c/tests/live_scenario.sh'] },
    ]);
  });

  it('takes the port from SDK_LIVE_PORT, and --port over it', () => {
    expect(optionsFrom(scenario, { SDK_LIVE_PORT: '8099' }).port).toBe(8099);
    expect(optionsFrom(['--port', '8100', ...scenario], { SDK_LIVE_PORT: '8099' }).port).toBe(8100);
    expect(optionsFrom([...scenario, '--port', '0']).port).toBe(0);
  });

  it('refuses a port that is none', () => {
    for (const bad of ['', '-1', '65536', 'http', '80a']) {
      expect(() => optionsFrom(['--port', bad, ...scenario])).toThrow(/--port takes a port/);
    }
    expect(() => optionsFrom(scenario, { SDK_LIVE_PORT: 'x' })).toThrow(/SDK_LIVE_PORT takes a port/);
  });
});
