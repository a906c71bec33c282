import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOKS_PREFIX } from '../../src/http/surface.js';
import { appIdOf } from '../http/audit-helpers.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';
import { apiDocument, operationName, type ApiDocument } from './support/api-operations.js';
import { FUZZ_TIMEOUT_MS, fuzzOperation, type FuzzSetup } from './support/fuzz-request.js';
import { changedTables, webhooksTenantState, type TenantState } from './support/tenant-state.js';

const OPERATIONS = [
  'POST /endpoints',
  'GET /endpoints',
  'GET /endpoints/{endpointId}',
  'PATCH /endpoints/{endpointId}',
  'DELETE /endpoints/{endpointId}',
  'POST /endpoints/{endpointId}/rotate-secret',
];

// Generated calls of every webhooks-API operation, read from /openapi.json: each answer is a
// proper envelope with a documented code (never "500"), a refused call leaves the app's endpoints
// as they were, and another app's endpoint is never reached.
const BODY_LIMIT = 256 * 1024;
let h: Harness;
let doc: ApiDocument;
let mine: TestApp;
let other: TestApp;
let setup: FuzzSetup;
let otherBefore: TenantState;

async function endpointOf(app: TestApp): Promise<string> {
  const response = await h.app.inject({
    method: 'POST',
    url: `${WEBHOOKS_PREFIX}/endpoints?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${await appToken(h, app)}` },
    payload: { url: 'https://hooks.example.com/keyward' },
  });
  return (response.json() as { data: { id: string } }).data.id;
}

beforeAll(async () => {
  h = await startHarness({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  doc = await apiDocument(h, WEBHOOKS_PREFIX);
  mine = await createTestApp(h, { scopes: ['auth_webhooks'] });
  other = await createTestApp(h, { scopes: ['auth_webhooks'] });
  const own = await endpointOf(mine);
  const theirs = await endpointOf(other);
  otherBefore = await webhooksTenantState(h.database.db, await appIdOf(h, other.appKey));
  const token = await appToken(h, mine);
  setup = {
    doc,
    headers: () => ({ authorization: `Bearer ${token}` }),
    bodyLimitBytes: BODY_LIMIT,
    pathValues: { endpointId: fc.constantFrom(own, theirs, 'ep_0123456789abcdef') },
    hints: {
      url: fc.constantFrom('https://hooks.example.com/a', 'http://127.0.0.1/x', 'ftp://x'),
      eventTypes: fc.constantFrom(['order.completed'], ['no.such'], []),
    },
  };
});
afterAll(async () => h.close());

describe('generated bad input on the webhooks API', () => {
  it('covers every operation of the OpenAPI document, each with its codes', () => {
    const documented = doc.operations.map((op) => operationName(op).replace(WEBHOOKS_PREFIX, ''));
    expect(documented.sort()).toEqual([...OPERATIONS].sort());
    for (const op of doc.operations) expect([...op.codes], operationName(op)).toContain('95000');
  });

  it.each(OPERATIONS)(
    '%s answers every generated call with an envelope and changes nothing when it refuses',
    async (name) => {
      const [method, path] = name.split(' ') as [string, string];
      const op = doc.operations.find((o) => o.method === method && o.path === `${WEBHOOKS_PREFIX}${path}`);
      if (!op) throw new Error(`${name} is not in the OpenAPI document`);
      const appId = await appIdOf(h, mine.appKey);
      // Every answer is checked inside: a documented code, never "500", no stack trace.
      const seen = await fuzzOperation(h, op, setup, () => webhooksTenantState(h.database.db, appId));
      // The list takes no input of its own (only the nonce), so nothing of it fails validation.
      if (name !== 'GET /endpoints') {
        expect(seen.get('95000') ?? 0, 'generated calls reach validation').toBeGreaterThan(0);
      }
    },
    FUZZ_TIMEOUT_MS,
  );

  it("leaves another app's endpoints untouched by all of it", async () => {
    const after = await webhooksTenantState(h.database.db, await appIdOf(h, other.appKey));
    expect(changedTables(otherBefore, after)).toEqual([]);
  });
});
