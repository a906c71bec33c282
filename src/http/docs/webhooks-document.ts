import { Tag } from './document-base.js';
import { eventEnvelopeSchema, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/event-types.js';

const signatureHeaders = {
  'webhook-id': {
    required: true,
    description: 'The event id: the same on every attempt of one event. Deduplicate by it.',
    schema: { type: 'string' },
  },
  'webhook-timestamp': {
    required: true,
    description: 'Seconds since the epoch at the attempt; refuse messages far from your clock.',
    schema: { type: 'string' },
  },
  'webhook-signature': {
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret that signs (two during a rotation). Standard Webhooks.',
    schema: { type: 'string' },
  },
};

/**
 * The OpenAPI 3.1 `webhooks`: one entry per event type, the body each delivery carries and the
 * Standard Webhooks headers that sign it. Built from the one list in event-types.ts.
 */
export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `Event ${type}`,
          operationId: `webhook_${type.replace('.', '_')}`,
          tags: [Tag.webhooks],
          // Keyward calls the receiver: no credential of Keyward's; the signature headers prove it.
          security: [],
          parameters: Object.entries(signatureHeaders).map(([name, h]) => ({ name, in: 'header', ...h })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: eventEnvelopeSchema(type) } },
          },
          responses: {
            '2XX': { description: 'Received. Anything else, a redirect included, is retried with backoff.' },
          },
        },
      },
    ]),
  );
}
