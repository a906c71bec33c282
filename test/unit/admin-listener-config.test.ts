import { describe, expect, it } from 'vitest';
import { adminUrl } from '../../src/cli/admin-client.js';
import { loadConfig } from '../../src/config.js';

describe('where the admin API listens', () => {
  it('stays on the one listener when HOST is a loopback address and ADMIN_PORT is unset', () => {
    for (const HOST of [undefined, '127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]']) {
      expect(loadConfig(HOST === undefined ? {} : { HOST }).adminListener, HOST).toBeUndefined();
    }
  });

  it('moves to 127.0.0.1:PORT+1 when HOST is public and ADMIN_PORT is unset', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).adminListener).toEqual({
      host: '127.0.0.1',
      port: 9001,
    });
    expect(loadConfig({ HOST: '10.1.2.3' }).adminListener).toEqual({ host: '127.0.0.1', port: 8081 });
    expect(loadConfig({ HOST: '::', PORT: '0' }).adminListener).toEqual({ host: '127.0.0.1', port: 0 });
    expect(() => loadConfig({ HOST: '0.0.0.0', PORT: '65535' })).toThrow(/ADMIN_PORT/);
  });

  it('listens on ADMIN_HOST:ADMIN_PORT when ADMIN_PORT is set', () => {
    expect(loadConfig({ ADMIN_PORT: '7000' }).adminListener).toEqual({ host: '127.0.0.1', port: 7000 });
    expect(loadConfig({ HOST: '0.0.0.0', ADMIN_HOST: '10.0.0.9', ADMIN_PORT: '7000' }).adminListener).toEqual(
      {
        host: '10.0.0.9',
        port: 7000,
      },
    );
    expect(() => loadConfig({ ADMIN_PORT: 'x' })).toThrow(/ADMIN_PORT/);
  });
});

describe("the CLI's admin URL", () => {
  it('follows the same environment as the server, KEYWARD_ADMIN_URL first', () => {
    expect(adminUrl({})).toBe('http://127.0.0.1:8080');
    expect(adminUrl({ KEYWARD_URL: 'http://box:1234/' })).toBe('http://box:1234');
    expect(adminUrl({ HOST: '0.0.0.0', PORT: '9000', KEYWARD_URL: 'http://box:9000' })).toBe(
      'http://127.0.0.1:9001',
    );
    expect(adminUrl({ ADMIN_HOST: '0.0.0.0', ADMIN_PORT: '7000' })).toBe('http://127.0.0.1:7000');
    expect(adminUrl({ ADMIN_HOST: '::1', ADMIN_PORT: '7000' })).toBe('http://[::1]:7000');
    expect(adminUrl({ HOST: '0.0.0.0', KEYWARD_ADMIN_URL: 'http://tunnel:7/' })).toBe('http://tunnel:7');
  });
});
