import { describe, expect, it } from 'vitest';
import type { AdminKey } from '../../src/admin-key.js';
import { loadConfig } from '../../src/config.js';
import { bannerLines, postgresLocation, type BannerFacts } from '../../src/startup/banner.js';
import { prettyLine } from '../../src/startup/pretty-log.js';

const SECRET = 'Zm9vYmFyLXRoZS1hZG1pbi1rZXk';

// The server hands the banner its AdminKey whole; the banner must not show what its type leaves out.
const fromFile: AdminKey = {
  key: SECRET,
  source: 'file',
  file: '/srv/keyward/data/admin.key',
  generated: true,
};
const fromVariable: AdminKey = { key: SECRET, source: 'variable' };

const facts = (over: Partial<BannerFacts> = {}): BannerFacts => ({
  version: '1.2.3',
  url: 'http://127.0.0.1:8080',
  adminUrl: undefined,
  database: { kind: 'embedded', dataDir: '/srv/keyward/data' },
  adminKey: fromFile,
  ...over,
});

describe('LOG_FORMAT', () => {
  it('defaults to pretty on a terminal and json otherwise', () => {
    expect(loadConfig({}, true).logFormat).toBe('pretty');
    expect(loadConfig({}, false).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: '' }, true).logFormat).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
  });

  it('refuses any other value, naming the variable', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow(
      'LOG_FORMAT must be "pretty" or "json", got "text"',
    );
    expect(() => loadConfig({ LOG_FORMAT: 'JSON' })).toThrow(/^LOG_FORMAT/);
  });
});

describe('the start banner', () => {
  it('names the URL, the console, the docs, the database, the admin key file and the next step', () => {
    const lines = bannerLines(facts());
    expect(lines).toContain('Keyward 1.2.3 is ready');
    expect(lines).toContain('  URL        http://127.0.0.1:8080');
    expect(lines).toContain('  console    http://127.0.0.1:8080/console');
    expect(lines).toContain('  API docs   http://127.0.0.1:8080/docs');
    expect(lines).toContain('  database   embedded, in /srv/keyward/data');
    expect(lines.find((l) => l.startsWith('  admin key'))).toMatch(
      /^ {2}admin key {2}in \/srv\/keyward\/data\/admin\.key \(generated at this start/,
    );
    expect(lines.some((l) => l.includes('admin API'))).toBe(false);
    expect(lines.some((l) => l.startsWith('  npx keyward demo'))).toBe(true);
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('prints the line that points every later command at this server, its real port', () => {
    const lines = bannerLines(facts({ url: 'http://127.0.0.1:17500' }));
    const at = lines.indexOf('  export KEYWARD_URL=http://127.0.0.1:17500');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ {2}npx keyward demo /);
    const apart = bannerLines(facts({ url: 'http://0.0.0.0:17500', adminUrl: 'http://127.0.0.1:17501' }));
    expect(apart).toContain(
      '  export KEYWARD_URL=http://0.0.0.0:17500 KEYWARD_ADMIN_URL=http://127.0.0.1:17501',
    );
  });

  it('says when the key comes from the variable, and where a separate admin listener is', () => {
    const lines = bannerLines(facts({ adminKey: fromVariable, adminUrl: 'http://127.0.0.1:8081' }));
    expect(lines).toContain('  admin key  from the KEYWARD_ADMIN_KEY variable');
    expect(lines).toContain('  admin API  http://127.0.0.1:8081');
    expect(lines.join('\n')).not.toContain(SECRET);
  });

  it('shows a PostgreSQL database by host and name, never its user, password or parameters', () => {
    const url = 'postgres://keyward:pa%3Ass@db.internal:6543/licenses?sslmode=require&password=again';
    expect(postgresLocation(url)).toBe('db.internal:6543/licenses');
    expect(postgresLocation('postgresql://u@[::1]/k')).toBe('[::1]/k');
    expect(postgresLocation('postgres:///k?host=/run/postgresql')).toBe('the local socket/k');
    const shown = bannerLines(facts({ database: { kind: 'postgres', databaseUrl: url } })).join('\n');
    expect(shown).toContain('  database   PostgreSQL at db.internal:6543/licenses');
    expect(shown).not.toMatch(/keyward:|pa%3Ass|pa:ss|again|sslmode/);
  });

  it('escapes what it prints from the environment', () => {
    const lines = bannerLines(facts({ database: { kind: 'embedded', dataDir: '/tmp/\u001b[2Jx' } }));
    expect(lines).toContain('  database   embedded, in /tmp/\\x1b[2Jx');
  });
});

describe('pretty log lines', () => {
  it('show the time, the level, the message and the fields, escaped', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 40,
        time: Date.now(),
        pid: 1,
        hostname: 'h',
        msg: 'odd \u001b[31mname',
        req: { method: 'GET', url: '/x y' },
        n: 3,
      }),
      false,
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d WARN {2}odd \\x1b\[31mname req\.method=GET req\.url="\/x y" n=3$/);
  });

  it('keep a line that is not JSON, escaped', () => {
    expect(prettyLine('plain \u0007text\n', false)).toBe('plain \\x07text');
  });
});
