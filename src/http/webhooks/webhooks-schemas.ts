import { Type } from 'typebox';
import { MAX_OVERLAP_SECONDS } from '../../domain/webhooks/endpoints.service.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/event-types.js';
import { URL_MAX_LENGTH } from '../../domain/webhooks/endpoint-url.js';
import { Nullable } from '../schema-types.js';

export const EndpointParams = Type.Object({
  endpointId: Type.String({ minLength: 1, maxLength: 64, pattern: '^ep_[0-9a-f]+$' }),
});

const Url = Type.String({
  maxLength: URL_MAX_LENGTH,
  description: 'where events are POSTed: https (http only where the server allows it), not a private address',
});

const EventTypes = Nullable(
  Type.Array(Type.String({ maxLength: 64 }), {
    minItems: 1,
    maxItems: WEBHOOK_EVENT_TYPES.length,
    description: `the event types to receive, of: ${WEBHOOK_EVENT_TYPES.join(', ')}; null or absent: all`,
  }),
);

export const CreateEndpointBody = Type.Object(
  { url: Url, eventTypes: Type.Optional(EventTypes) },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    eventTypes: Type.Optional(EventTypes),
    enabled: Type.Optional(
      Type.Literal(true, { description: 'true re-enables an endpoint disabled after failures' }),
    ),
  },
  { additionalProperties: false },
);

export const RotateSecretBody = Type.Object(
  {
    overlapSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_OVERLAP_SECONDS,
        description: 'how long the previous secret also signs; default 86400',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Endpoint = Type.Object({
  id: Type.String(),
  url: Type.String(),
  eventTypes: Nullable(Type.Array(Type.String())),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  disabledReason: Nullable(Type.String()),
  consecutiveFailures: Type.Integer(),
  previousSecretExpiresAt: Nullable(
    Type.String({ description: 'until when the previous secret also signs' }),
  ),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const EndpointWithSecret = Type.Object({
  ...Endpoint.properties,
  secret: Type.String({ description: 'whsec_…: shown only now; keep it to verify signatures' }),
});
