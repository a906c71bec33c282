import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import type { App } from '../../src/http/app-type.js';
import { serializeRequest } from '../../src/http/log-serializers.js';
import { prettyLine } from '../../src/startup/pretty-log.js';
import { openTestDatabase } from '../support/database.js';
import { ADMIN_KEY } from '../support/harness.js';
import { TEST_ENV } from '../support/test-env.js';

// The server's request log, as `keyward serve` configures it (serializers, debug level so the
// probes' lines can be seen): one line per request, when it completes; probes at debug.
interface Line {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
}

const written: string[] = [];
/** Warnings emitted while the app was built: a deprecated option would print one at every start. */
const warnings: string[] = [];
let app: App;
let database: DatabaseHandle;

beforeAll(async () => {
  const logger = pino(
    { level: 'debug', serializers: { req: serializeRequest } },
    { write: (line: string) => void written.push(line) },
  );
  database = await openTestDatabase();
  const onWarning = (warning: Error) => void warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  app = await buildApp({
    config: loadConfig({ DATA_DIR: '/nonexistent-test-data', ...TEST_ENV }),
    db: database.db,
    adminKey: ADMIN_KEY,
    logger,
  });
  await app.ready();
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
});
afterAll(async () => {
  await app?.close();
  await database?.close();
});

/** The lines logged while `call` ran. */
async function logged(call: () => Promise<unknown>): Promise<Line[]> {
  const before = written.length;
  await call();
  return written.slice(before).map((line) => JSON.parse(line) as Line);
}

describe('the request log', () => {
  it('writes one info line per request, when it completes: method, URL, status (here HTTP 299, a refusal) and time', async () => {
    const lines = await logged(() =>
      app.inject({ method: 'POST', url: '/order/api/order/v1/shellnums?g_nonce=abcdefgh12', payload: {} }),
    );
    expect(lines).toHaveLength(1);
    const [line] = lines as [Line];
    expect(line.level).toBe(30);
    expect(line.msg).toMatch(
      /^POST \/order\/api\/order\/v1\/shellnums\?g_nonce=abcdefgh12 299 \d+(\.\d)? ms$/,
    );
    expect(line.req).toMatchObject({
      method: 'POST',
      url: '/order/api/order/v1/shellnums?g_nonce=abcdefgh12',
    });
    expect(line.res).toEqual({ statusCode: 299 });
    expect(line.responseTime).toEqual(expect.any(Number));
    expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps credentials out of the line’s text as out of its fields', async () => {
    const lines = await logged(() => app.inject({ method: 'GET', url: '/admin/apps?key=s3cret-admin-key' }));
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain('s3cret-admin-key');
    expect(lines[0]?.msg).toMatch(/^GET \/admin\/apps\?key=\[redacted\] 401 /);
  });

  it('logs the health probes and /metrics at debug, so the info log shows calls only', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics', '/healthz?x=1']) {
      const lines = await logged(() => app.inject({ method: 'GET', url }));
      expect(lines, url).toHaveLength(1);
      expect(lines[0]?.level, url).toBe(20);
      expect(lines[0]?.msg, url).toMatch(new RegExp(`^GET ${url.replace('?', '\\?')} 200 `));
    }
    // Not a probe: a path that merely starts like one.
    const [other] = await logged(() => app.inject({ method: 'GET', url: '/healthz-not' }));
    expect(other?.level).toBe(30);
  });

  it('is configured without a deprecated option (no warning at start)', () => {
    expect(warnings.filter((w) => w.includes('Fastify'))).toEqual([]);
  });

  it('reads as one short line on a terminal', async () => {
    const [line] = await logged(() => app.inject({ method: 'GET', url: '/healthz' }));
    const raw = written.at(-1) ?? '';
    expect(line?.msg).toMatch(/^GET \/healthz 200 /);
    expect(prettyLine(raw, false)).toMatch(
      /^\d\d:\d\d:\d\d DEBUG GET \/healthz 200 \d+(\.\d)? ms reqId=[0-9a-f-]{36}$/,
    );
  });
});
