/** A webhook Keyward sent: the body's fields (docs/webhooks.md lists the types and their data). */
export interface WebhookEvent {
  id: string;
  type: string;
  timestamp: string;
  scope: { channels: string[]; enterpriseId: string | null; appKey: string | null };
  data: Record<string, unknown>;
  requestId: string | null;
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyWebhookOptions {
  /** How far the message's timestamp may be from now, in seconds (replays); 300 unless given. */
  toleranceSeconds?: number;
  /** The clock, in milliseconds; tests pin it. */
  now?: () => number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  const one = Array.isArray(value) ? value[0] : value;
  if (one === undefined || one === null || one === '')
    throw new WebhookVerificationError(`missing ${name} header`);
  return one;
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** Same length and content, in time that does not depend on where they differ. */
function equalInConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a webhook by the Standard Webhooks scheme and answers its event: the
 * `webhook-signature` header must hold a `v1,` HMAC-SHA256 of `id.timestamp.body` under one of
 * `secrets` (the endpoint's `whsec_…`; two while a rotation overlaps), and `webhook-timestamp`
 * must be within the tolerance. `body` is the raw request body, exactly as received.
 * Deduplicate by the event's `id`: a delivery may come more than once.
 */
export async function verifyWebhook(
  secrets: string | readonly string[],
  body: string,
  headers: HeaderSource,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature')
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  if (!/^[0-9]+$/.test(timestamp)) throw new WebhookVerificationError('invalid webhook-timestamp header');
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('webhook-timestamp too far from now');
  }
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const raw = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
    const key = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const expected = bytesToBase64(new Uint8Array(await crypto.subtle.sign('HMAC', key, signed)));
    if (signatures.some((s) => equalInConstantTime(s, expected))) {
      const event = JSON.parse(body) as WebhookEvent;
      if (event.id !== id) throw new WebhookVerificationError('webhook-id differs from the event id');
      return event;
    }
  }
  throw new WebhookVerificationError('no matching signature');
}
