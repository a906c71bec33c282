/**
 * The webhooks API's codes (/v1/webhooks), its one closed table. An endpoint of another app is
 * answered exactly as one that does not exist.
 */
export const WebhookCode = {
  validation: '95000',
  endpointNotFound: '95001',
  tooManyEndpoints: '95002',
} as const;

export type WebhookCodeValue = (typeof WebhookCode)[keyof typeof WebhookCode];

/** Message templates; `{0}`, `{1}` … are filled by fillMessage. */
export const webhookMessages: Record<WebhookCodeValue, string> = {
  '95000': 'invalid parameter',
  '95001': 'no such endpoint',
  '95002': 'an application has at most {0} endpoints',
};
