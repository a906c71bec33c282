import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/server-process.js';
import { startDemoServer, type DemoServer } from './support/demo-server.js';

// `keyward webhooks` against a real `keyward serve` (no delivery worker, as every test server): an
// app with one endpoint, and the event of the app's disabling, which its own endpoint receives.
let live: DemoServer;
let env: Record<string, string>;
let appKey: string;
let endpointId: string;
let from: string;

beforeAll(async () => {
  live = await startDemoServer();
  env = live.cliEnv;
  const created = await runCli(
    ['app', 'create', '--name', 'hooks', '--scopes', 'auth_webhooks', '--channels', 'HOOKS', '--json'],
    env,
  );
  expect(created.code, created.stderr).toBe(0);
  const app = JSON.parse(created.stdout) as { appKey: string; appSecret: string };
  appKey = app.appKey;
  const token = await runCli(
    ['token', '--app-key', app.appKey, '--app-secret', app.appSecret, '--scope', 'auth_webhooks'],
    env,
  );
  expect(token.code, token.stderr).toBe(0);
  const response = await fetch(`${live.server.url}/v1/webhooks/endpoints?g_nonce=${randomUUID()}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.stdout.trim()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.example.com/keyward', eventTypes: ['app.disabled'] }),
  });
  const answer = (await response.json()) as { data: { id: string } };
  endpointId = answer.data.id;
  from = new Date().toISOString();
  expect((await runCli(['app', 'disable', appKey], env)).code).toBe(0);
});
afterAll(async () => live?.stop());

describe('keyward webhooks', () => {
  it('lists endpoints and deliveries as text and JSON, never the secret', async () => {
    const endpoints = await runCli(['webhooks', 'endpoints', '--app', appKey], env);
    expect(endpoints.code, endpoints.stderr).toBe(0);
    expect(endpoints.stdout.trim().split('\n')).toEqual([
      'endpoint\tapp\turl\tevents\tstatus\tfailures\tlastAttempt\tlast',
      `${endpointId}\t${appKey}\thttps://hooks.example.com/keyward\tapp.disabled\tenabled\t0\t-\t-`,
    ]);
    const json = await runCli(['webhooks', 'endpoints', '--json'], env);
    expect(json.stdout).not.toContain('whsec_');
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ id: endpointId, appKey })]);

    const deliveries = await runCli(['webhooks', 'deliveries', '--endpoint', endpointId], env);
    expect(deliveries.code, deliveries.stderr).toBe(0);
    const [header, row, ...rest] = deliveries.stdout.trim().split('\n');
    expect(header).toBe('delivery\tendpoint\tevent\ttype\tstatus\tattempts\tlast\tlatencyMs\terror\tnext');
    expect(rest).toEqual([]);
    expect(row?.split('\t').slice(1)).toEqual([
      endpointId,
      expect.stringMatching(/^evt_/),
      'app.disabled',
      'pending',
      '0',
      '-',
      '-',
      '-',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    ]);
  });

  it('retries one delivery and replays a range, audited', async () => {
    const [listed] = JSON.parse(
      (await runCli(['webhooks', 'deliveries', '--endpoint', endpointId, '--json'], env)).stdout,
    ) as Array<{ id: number }>;
    const retried = await runCli(['webhooks', 'retry', String(listed?.id)], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout.trim()).toBe(`delivery ${listed?.id} (pending) is due now`);

    const to = new Date(Date.now() + 1000).toISOString();
    const replayed = await runCli(
      ['webhooks', 'replay', '--endpoint', endpointId, '--from', from, '--to', to],
      env,
    );
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout.trim()).toBe(`1 event from ${from} to ${to} queued to ${endpointId} (${appKey})`);

    const audit = await runCli(['audit', '--action', 'webhook.replayed', '--json'], env);
    expect(audit.stdout).toContain(endpointId);
  });

  it('exits 1 with the reason on an unknown id, a bad range or a bad limit', async () => {
    const cases: Array<[string[], string]> = [
      [['webhooks', 'retry', '99999'], 'no delivery 99999'],
      [['webhooks', 'endpoints', '--app', 'kw_nope'], 'no application kw_nope'],
      [['webhooks', 'deliveries', '--endpoint', 'ep_nope'], 'no endpoint ep_nope'],
      [['webhooks', 'deliveries', '--limit', '5000'], 'limit'],
      [
        [
          'webhooks',
          'replay',
          '--endpoint',
          endpointId,
          '--from',
          '2026-02-01T00:00:00Z',
          '--to',
          '2026-01-01T00:00:00Z',
        ],
        'from: must be before to',
      ],
      [
        ['webhooks', 'replay', '--endpoint', endpointId, '--from', 'monday', '--to', '2026-01-01T00:00:00Z'],
        'from',
      ],
    ];
    for (const [argv, message] of cases) {
      const result = await runCli(argv, env);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr, argv.join(' ')).toContain(message);
    }
  });
});
