import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/event-types.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('the API document’s webhooks', () => {
  it('lists every event type with its body and the signature headers, in a valid document', async () => {
    const document = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      webhooks: Record<string, { post: { parameters: Array<{ name: string }>; requestBody: unknown } }>;
    };
    expect(Object.keys(document.webhooks)).toEqual([...WEBHOOK_EVENT_TYPES]);
    const completed = document.webhooks['order.completed']?.post;
    expect(completed?.parameters.map((p) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    expect(JSON.stringify(completed?.requestBody)).toContain('"licenseOrderId"');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });
});
