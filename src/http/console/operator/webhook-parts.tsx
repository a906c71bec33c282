import type { AdminEndpointRow } from '../../../domain/webhooks/webhook-admin.repository.js';
import type { ConsoleContext } from '../context.js';
import { Badge, CompactTime, InlineList, Time, toneOf } from '../ui.js';
import { StoredError } from './webhook-errors.js';

/** Characters of an attempt's error shown in a table: the stored ones are short sentences. */
const ERROR_CHARS = 200;

/**
 * What an attempt's error adds to its outcome: nothing when it only restates the status code the
 * outcome already shows ("status 503" beside "HTTP 503").
 */
export function errorBeyondStatus(error: string | null, statusCode: number | null): string | null {
  return error === null || error === `status ${statusCode}` ? null : error;
}

/** An endpoint's event filter: the types, or every type when it has none. */
export function EventFilter(props: { context: ConsoleContext; types: string[] | null }) {
  const { context, types } = props;
  if (types === null) return <em>{context.t('webhooks.allEvents')}</em>;
  return (
    <span class="event-types">
      <InlineList items={types} />
    </span>
  );
}

/** Enabled or disabled, and why it was disabled. */
export function EndpointStatus(props: { context: ConsoleContext; endpoint: AdminEndpointRow }) {
  const { context, endpoint } = props;
  return (
    <span class="webhook-status">
      <span class={`status-${endpoint.status}`} data-status={endpoint.status}>
        <Badge tone={toneOf(endpoint.status)}>
          {context.t(endpoint.status === 'enabled' ? 'webhooks.status.enabled' : 'webhooks.status.disabled')}
        </Badge>
      </span>
      {endpoint.disabledReason !== null && (
        <>
          <br />
          <small class="reason">
            <StoredError context={context} error={endpoint.disabledReason} />
          </small>
        </>
      )}
    </span>
  );
}

/** The failures in a row, and since when. */
export function Failures(props: { context: ConsoleContext; endpoint: AdminEndpointRow }) {
  const { context, endpoint } = props;
  return (
    <>
      <span data-failures={endpoint.consecutiveFailures}>{endpoint.consecutiveFailures}</span>
      {endpoint.failingSince !== null && (
        <>
          <br />
          <small>
            {context.t('webhooks.since')} <Time at={endpoint.failingSince} />
          </small>
        </>
      )}
    </>
  );
}

/** An attempt's outcome: its HTTP status, or its error when nothing answered. */
export function Outcome(props: {
  context: ConsoleContext;
  statusCode: number | null;
  error: string | null;
  latencyMs?: number | null;
}) {
  const { context, statusCode, error, latencyMs } = props;
  const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
  return (
    <span class={ok ? 'outcome-ok' : 'outcome-failed'}>
      {statusCode !== null ? (
        context.t('webhooks.http', { code: statusCode })
      ) : error === null ? (
        '—'
      ) : (
        <StoredError context={context} error={error} max={ERROR_CHARS} />
      )}
      {latencyMs !== null && latencyMs !== undefined && ` · ${context.t('webhooks.ms', { ms: latencyMs })}`}
    </span>
  );
}

/**
 * When the endpoint was last tried, and how that went. `compact` in a table, whose header says
 * UTC.
 */
export function LastAttempt(props: {
  context: ConsoleContext;
  endpoint: AdminEndpointRow;
  compact?: boolean;
}) {
  const { context, endpoint } = props;
  if (endpoint.lastAttemptAt === null) return <span class="hint">{context.t('webhooks.never')}</span>;
  return (
    <>
      {props.compact === true ? (
        <CompactTime at={endpoint.lastAttemptAt} />
      ) : (
        <Time at={endpoint.lastAttemptAt} />
      )}
      <br />
      <Outcome context={context} statusCode={endpoint.lastStatusCode} error={endpoint.lastError} />
    </>
  );
}
