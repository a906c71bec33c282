import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

interface Problem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: Array<{ pointer: string }>;
}

let h: Harness;
let document: {
  servers?: Array<{ url: string }>;
  info: { license?: unknown };
  paths: Record<string, Record<string, { operationId?: string; security?: unknown }>>;
};
let problems: Problem[];

beforeAll(async () => {
  h = await startHarness();
  const answer = await h.app.inject({
    method: 'GET',
    url: '/openapi.json',
    headers: { host: 'keyward.test:8443' },
  });
  document = answer.json();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-openapi-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, answer.body);
  const lint = await run(
    process.execPath,
    [CLI, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json'],
    {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 32 * 1024 * 1024,
    },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  problems = (JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as { problems: Problem[] }).problems;
  fs.rmSync(dir, { recursive: true, force: true });
}, 120_000);
afterAll(async () => h.close());

describe('the OpenAPI document, as code generators take it', () => {
  it('passes @redocly/cli lint with its recommended rules, with no error', () => {
    expect(
      problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}`),
    ).toEqual([]);
  });

  it('keeps only the warnings redocly.yaml lists with a reason', () => {
    const kept = Object.keys(
      (parse(fs.readFileSync(path.join(ROOT, 'redocly.yaml'), 'utf8')) as { rules: object }).rules,
    );
    expect([...new Set(problems.map((p) => p.ruleId))].filter((rule) => !kept.includes(rule))).toEqual([]);
  });

  it('names every operation, uniquely, after its operation in the spec', () => {
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    expect(ids.filter((id) => id === undefined)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([
        'bindEnterpriseUser',
        'batchOrder',
        'addMembers',
        'checkOutLease',
        'requestToken',
      ]),
    );
  });

  it('says where the caller reached the server, the license, and no credential for public routes', () => {
    expect(document.servers).toEqual([{ url: 'http://keyward.test:8443' }]);
    expect(document.info.license).toEqual({ name: 'Apache License 2.0', identifier: 'Apache-2.0' });
    for (const publicPath of ['/healthz', '/readyz', '/.well-known/jwks.json']) {
      expect(document.paths[publicPath]?.get?.security, publicPath).toEqual([]);
    }
  });
});
