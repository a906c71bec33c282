import type { Command } from 'commander';
import type { AdminDeliveryRow, AdminEndpointRow } from '../../domain/webhooks/webhook-admin.repository.js';
import type { Replayed, RetriedDelivery } from '../../domain/webhooks/webhook-admin.service.js';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

/** A row as the admin API answers it: its times as ISO 8601 strings. */
type Answered<T> = {
  [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K];
};

interface JsonOption {
  json?: boolean;
}

async function endpoints(options: JsonOption & { app?: string; limit: string }): Promise<void> {
  const query = new URLSearchParams({ limit: options.limit });
  if (options.app !== undefined) query.set('app', options.app);
  const rows = await adminCall<Answered<AdminEndpointRow>[]>(
    'GET',
    `/webhooks/endpoints?${query.toString()}`,
  );
  if (options.json === true) {
    console.log(printableJson(rows));
    return;
  }
  console.log('endpoint\tapp\turl\tevents\tstatus\tfailures\tlastAttempt\tlast');
  for (const e of rows) {
    const events = e.eventTypes === null ? '*' : e.eventTypes.join(',');
    const status = e.disabledReason === null ? e.status : `${e.status} (${e.disabledReason})`;
    // The last attempt's status code, or its error when there was no answer.
    const last = e.lastStatusCode ?? e.lastError ?? '-';
    console.log(
      text`${e.id}\t${e.appKey}\t${e.url}\t${events}\t${status}\t${e.consecutiveFailures}\t${e.lastAttemptAt ?? '-'}\t${last}`,
    );
  }
}

async function deliveries(
  options: JsonOption & { endpoint?: string; status?: string; before?: string; limit: string },
): Promise<void> {
  const query = new URLSearchParams({ limit: options.limit });
  if (options.endpoint !== undefined) query.set('endpoint', options.endpoint);
  if (options.status !== undefined) query.set('status', options.status);
  if (options.before !== undefined) query.set('before', options.before);
  const rows = await adminCall<Answered<AdminDeliveryRow>[]>(
    'GET',
    `/webhooks/deliveries?${query.toString()}`,
  );
  if (options.json === true) {
    console.log(printableJson(rows));
    return;
  }
  console.log('delivery\tendpoint\tevent\ttype\tstatus\tattempts\tlast\tlatencyMs\terror\tnext');
  for (const d of rows) {
    const next = d.status === 'pending' ? d.nextAttemptAt : '-';
    console.log(
      text`${d.id}\t${d.endpointId}\t${d.eventId}\t${d.eventType}\t${d.status}\t${d.attempts}\t${d.lastStatusCode ?? '-'}\t${d.lastLatencyMs ?? '-'}\t${d.lastError ?? '-'}\t${next}`,
    );
  }
}

async function retry(deliveryId: string, options: JsonOption): Promise<void> {
  const retried = await adminCall<RetriedDelivery>(
    'POST',
    `/webhooks/deliveries/${encodeURIComponent(deliveryId)}/retry`,
  );
  if (options.json === true) {
    console.log(printableJson(retried));
    return;
  }
  console.log(text`delivery ${retried.id} (${retried.previousStatus}) is due now`);
  if (retried.endpointStatus !== 'enabled') {
    console.log(
      text`endpoint ${retried.endpointId} is ${retried.endpointStatus}: sent once its app enables it`,
    );
  }
}

async function replay(options: JsonOption & { endpoint: string; from: string; to: string }): Promise<void> {
  const replayed = await adminCall<Replayed>(
    'POST',
    `/webhooks/endpoints/${encodeURIComponent(options.endpoint)}/replay`,
    { from: options.from, to: options.to },
  );
  if (options.json === true) {
    console.log(printableJson(replayed));
    return;
  }
  const events = replayed.queued === 1 ? 'event' : 'events';
  console.log(
    text`${replayed.queued} ${events} from ${replayed.from} to ${replayed.to} queued to ${replayed.endpointId} (${replayed.appKey})`,
  );
  if (replayed.endpointStatus !== 'enabled') {
    console.log(
      text`endpoint ${replayed.endpointId} is ${replayed.endpointStatus}: sent once its app enables it`,
    );
  }
}

/** `keyward webhooks endpoints|deliveries|retry|replay`: webhook endpoints and deliveries of every app. */
export function registerWebhooksCommands(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description("every app's webhook endpoints and deliveries: inspect, retry, replay")
    .addHelpText(
      'after',
      examples([
        'keyward webhooks endpoints',
        'keyward webhooks deliveries --status failed',
        'keyward webhooks retry 1234',
        'keyward webhooks replay --endpoint ep_… --from 2026-11-23T00:00:00Z --to 2026-11-24T00:00:00Z',
      ]),
    );
  webhooks
    .command('endpoints')
    .description('list endpoints, oldest first, never their secret (tab-separated, with a header)')
    .option('--app <APP_KEY>', "only this application's endpoints")
    .option('--limit <N>', 'at most this many endpoints (1 to 1000)', '100')
    .option('--json', 'print one JSON array, times as ISO 8601')
    .addHelpText(
      'after',
      examples(['keyward webhooks endpoints', 'keyward webhooks endpoints --app kw_… --json']),
    )
    .action(endpoints);
  webhooks
    .command('deliveries')
    .description(
      'list deliveries, newest first, with attempts and the last outcome (tab-separated, with a header)',
    )
    .option('--endpoint <ID>', "only this endpoint's deliveries")
    .option('--status <STATUS>', 'only pending, delivered or failed ones')
    .option('--limit <N>', 'at most this many deliveries (1 to 1000)', '50')
    .option('--before <DELIVERY_ID>', 'only deliveries older than this one (the next page)')
    .option('--json', 'print one JSON array, times as ISO 8601')
    .addHelpText(
      'after',
      examples([
        'keyward webhooks deliveries --status failed',
        'keyward webhooks deliveries --endpoint ep_… --json',
      ]),
    )
    .action(deliveries);
  webhooks
    .command('retry')
    .description('make one delivery due now, a failed one too (one more attempt); audited')
    .argument('<DELIVERY_ID>', 'a delivery id, as `keyward webhooks deliveries` shows it')
    .option('--json', 'print one JSON object: id, endpointId, eventId, previousStatus, endpointStatus')
    .addHelpText('after', examples(['keyward webhooks retry 1234']))
    .action(retry);
  webhooks
    .command('replay')
    .description(
      'queue again to one endpoint every event of a time range its app receives (at most 10,000 a call); audited',
    )
    .requiredOption('--endpoint <ID>', 'the endpoint to send them to')
    .requiredOption('--from <ISO>', 'events that occurred at or after this time…')
    .requiredOption('--to <ISO>', '…and before this one')
    .option('--json', 'print one JSON object: endpointId, appKey, from, to, queued, endpointStatus')
    .addHelpText(
      'after',
      [
        '',
        "Only events the endpoint's app is entitled to are sent: its own, and its channels', that the",
        "endpoint's event filter admits. An event the endpoint already had is sent again under the same",
        'webhook-id, so receivers that drop duplicates by id drop it.',
        examples([
          'keyward webhooks replay --endpoint ep_… --from 2026-11-23T00:00:00Z --to 2026-11-24T00:00:00Z',
        ]),
      ].join('\n'),
    )
    .action(replay);
}
