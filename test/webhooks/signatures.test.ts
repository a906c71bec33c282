import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newEndpointSecret, signatureHeader } from '../../src/domain/webhooks/secrets.js';

// The Standard Webhooks specification's own example (its reference libraries test with it).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

function verifier(secret: string, at: number) {
  // The reference verifier checks the timestamp against the clock: pinned to the vector's time.
  return (body: string, headers: Record<string, string>) => {
    const realNow = Date.now;
    Date.now = () => at * 1000;
    try {
      return new Webhook(secret).verify(body, headers);
    } finally {
      Date.now = realNow;
    }
  };
}

describe('webhook signatures', () => {
  it('match the Standard Webhooks test vector, and the reference verifier accepts them', () => {
    const header = signatureHeader(
      [VECTOR.secret],
      VECTOR.id,
      new Date(VECTOR.timestamp * 1000),
      VECTOR.body,
    );
    expect(header).toBe(VECTOR.signature);
    const verify = verifier(VECTOR.secret, VECTOR.timestamp);
    expect(
      verify(VECTOR.body, {
        'webhook-id': VECTOR.id,
        'webhook-timestamp': String(VECTOR.timestamp),
        'webhook-signature': header,
      }),
    ).toEqual({ test: 2432232314 });
  });

  it('are HMAC-SHA256 over id.timestamp.body with the secret’s bytes', () => {
    const secret = newEndpointSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update('evt_1.1700000000.{"a":1}').digest('base64');
    expect(signatureHeader([secret], 'evt_1', new Date(1_700_000_000_000), '{"a":1}')).toBe(`v1,${expected}`);
  });

  it('carry one signature per secret during a rotation: either secret verifies', () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    const at = 1_700_000_000;
    const body = '{"type":"order.completed"}';
    const header = signatureHeader([current, previous], 'evt_2', new Date(at * 1000), body);
    expect(header.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'evt_2', 'webhook-timestamp': String(at), 'webhook-signature': header };
    expect(verifier(current, at)(body, headers)).toEqual({ type: 'order.completed' });
    expect(verifier(previous, at)(body, headers)).toEqual({ type: 'order.completed' });
    expect(() => verifier(newEndpointSecret(), at)(body, headers)).toThrow(WebhookVerificationError);
    // A changed body fails.
    expect(() => verifier(current, at)(`${body} `, headers)).toThrow(WebhookVerificationError);
  });
});
