import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new endpoint secret in the Standard Webhooks form: whsec_ and 32 random bytes in base64. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A new endpoint id. */
export function newEndpointId(): string {
  return `ep_${randomBytes(12).toString('hex')}`;
}

/**
 * The `webhook-signature` header: one `v1,<base64 HMAC-SHA256 of id.timestamp.body>` per secret,
 * space-separated, so during a rotation a receiver holding either secret verifies the message.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: Date,
  body: string,
): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' ');
}
