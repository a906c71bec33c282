import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.js';
import { eventBody } from '../../src/domain/webhooks/delivery.service.js';
import { newEndpointSecret, signatureHeader } from '../../src/domain/webhooks/secrets.js';

const AT = 1_700_000_000;
const now = () => AT * 1000 + 20_000;

/** A message exactly as the server's worker signs and sends it. */
function serverMessage(secrets: string[], id = 'evt_0123456789abcdef0123456789abcdef') {
  const body = eventBody({
    id,
    type: 'order.completed',
    occurredAt: new Date(AT * 1000),
    channels: ['CH1'],
    enterpriseId: 'ent-1',
    appKey: 'app-1',
    data: { licenseOrderId: 'LO1', sequence: 1 },
    requestId: null,
  });
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(AT),
    'webhook-signature': signatureHeader(secrets, id, new Date(AT * 1000), body),
  };
  return { body, headers };
}

describe('verifyWebhook', () => {
  it('answers the event of a message the server signed', async () => {
    const secret = newEndpointSecret();
    const { body, headers } = serverMessage([secret]);
    await expect(verifyWebhook(secret, body, headers, { now })).resolves.toMatchObject({
      id: headers['webhook-id'],
      type: 'order.completed',
      data: { licenseOrderId: 'LO1' },
    });
    // Headers as fetch hands them over work too.
    await expect(verifyWebhook(secret, body, new Headers(headers), { now })).resolves.toBeDefined();
  });

  it('matches the Standard Webhooks test vector', async () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const body = '{"test": 2432232314, "id": "msg_p5jXN8AQM9LWM0D4loKWxJek"}';
    // The vector's signature matches its bytes: the refusal is only that its body, not a Keyward
    // event, carries no id. Other bytes under the same headers do not match.
    await expect(
      verifyWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '{"test": 2432232314}', headers, {
        now: () => 1614265330_000,
      }),
    ).rejects.toThrow('webhook-id differs from the event id');
    await expect(
      verifyWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', body, headers, { now: () => 1614265330_000 }),
    ).rejects.toThrow('no matching signature');
  });

  it('takes either secret while a rotation overlaps', async () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    const { body, headers } = serverMessage([current, previous]);
    await expect(verifyWebhook(previous, body, headers, { now })).resolves.toBeDefined();
    await expect(
      verifyWebhook([newEndpointSecret(), current], body, headers, { now }),
    ).resolves.toBeDefined();
  });

  it('refuses a wrong secret, a changed body, a stale timestamp and missing headers', async () => {
    const secret = newEndpointSecret();
    const { body, headers } = serverMessage([secret]);
    const refused = (p: Promise<unknown>, message: string) =>
      expect(p).rejects.toThrow(new WebhookVerificationError(message));
    await refused(verifyWebhook(newEndpointSecret(), body, headers, { now }), 'no matching signature');
    await refused(
      verifyWebhook(secret, body.replace('LO1', 'LO2'), headers, { now }),
      'no matching signature',
    );
    await refused(
      verifyWebhook(secret, body, headers, { now: () => (AT + 301) * 1000 }),
      'webhook-timestamp too far from now',
    );
    await refused(
      verifyWebhook(secret, body, { ...headers, 'webhook-signature': '' }, { now }),
      'missing webhook-signature header',
    );
  });
});
