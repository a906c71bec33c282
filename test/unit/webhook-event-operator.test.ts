import { describe, expect, it } from 'vitest';
import { eventOf } from '../../src/domain/webhooks/audit-events.js';

// A webhook event names the operator who caused it, as the audit row does; the admin key and the
// apps name no one, so their events carry no operator.
describe('webhook events and operators', () => {
  const change = {
    action: 'app.disabled' as const,
    subject: 'kw_app',
    enterprise: null,
    detail: { previousStatus: 'active' },
  };
  const ids = { requestId: 'r1', clientRequestId: null };

  it('names a named operator by id and name', () => {
    const event = eventOf({ appId: null, operator: 'Ada Lee', operatorId: 'op-1', ...ids }, change);
    expect(event?.type).toBe('app.disabled');
    expect(event?.data).toEqual({
      appKey: 'kw_app',
      previousStatus: 'active',
      operator: { id: 'op-1', name: 'Ada Lee' },
    });
  });

  it('names no one for the admin key', () => {
    const event = eventOf({ appId: null, operator: 'admin-api', operatorId: null, ...ids }, change);
    expect(event?.data).not.toHaveProperty('operator');
  });
});
