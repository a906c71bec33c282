import { Type } from 'typebox';

/** An endpoint id as the webhooks API gives them out (ep_…); anything else cannot name one. */
export const EndpointId = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: 'an endpoint id, ep_…',
});

/** An ISO 8601 time with its zone. */
export const Instant = (description: string) => Type.String({ format: 'date-time', description });
