import { REFUSED_ADDRESSES } from '../../../domain/webhooks/outbound.js';
import type { ConsoleContext } from '../context.js';
import type { MessageKey, Translate } from '../i18n/index.js';

/**
 * The sentences Keyward itself writes about a webhook attempt (outbound.ts, delivery.service.ts),
 * stored in English: each pattern names its message, whose parameters are the pattern's groups.
 * Anything else (a system error code, text the receiver wrote) is quoted as it is, not translated.
 */
const KEYWARD_WROTE: Array<[RegExp, MessageKey, string[]]> = [
  [/^status (\d{3})$/, 'webhooks.err.status', ['code']],
  [/^redirect not followed$/, 'webhooks.err.redirect', []],
  [/^timed out after (\d+) ms$/, 'webhooks.err.timeout', ['ms']],
  [/^connection not made within (\d+) ms$/, 'webhooks.err.connect', ['ms']],
  [/^request failed$/, 'webhooks.err.requestFailed', []],
  [/^request failed: (\S+)$/, 'webhooks.err.requestFailedCode', ['code']],
  [/^the endpoint host could not be resolved$/, 'webhooks.err.unresolved', []],
  [/^host (\S+) does not resolve$/, 'webhooks.err.hostUnresolved', ['host']],
  [new RegExp(`^host (\\S+) resolves only to ${REFUSED_ADDRESSES}$`), 'webhooks.err.hostPrivate', ['host']],
  [/^the endpoint URL is not valid$/, 'webhooks.err.badUrl', []],
  [/^the endpoint URL must be https \(WEBHOOK_ALLOW_HTTP=1 allows http\)$/, 'webhooks.err.https', []],
  [/^(\d+) failed attempts in a row since (\S+)$/, 'webhooks.err.streak', ['count', 'since']],
];

/** A stored error in the page's language when Keyward wrote it; undefined when it did not. */
export function translatedError(t: Translate, error: string): string | undefined {
  for (const [pattern, key, names] of KEYWARD_WROTE) {
    const match = pattern.exec(error);
    if (match === null) continue;
    const params = Object.fromEntries(names.map((name, i) => [name, match[i + 1] ?? '']));
    return t(key, params);
  }
  return undefined;
}

/**
 * A stored error as the operator reads it: Keyward's own sentence in his language, anything else
 * quoted as received (in its own language, marked so a screen reader reads it so).
 */
export function StoredError(props: { context: ConsoleContext; error: string; max?: number }) {
  const { context, error, max = 200 } = props;
  const translated = translatedError(context.t, error);
  if (translated !== undefined) return <span data-error={error}>{translated}</span>;
  const shown = error.length > max ? `${error.slice(0, max)}…` : error;
  return (
    <q class="received" lang="en" data-error={error}>
      {shown}
    </q>
  );
}
