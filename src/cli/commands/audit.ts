import type { Command } from 'commander';
import type { AuditRecord } from '../../domain/audit/audit.repository.js';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';
import { timeFilter } from '../time-filter.js';

interface AuditOptions {
  subject?: string;
  enterprise?: string;
  app?: string;
  action?: string;
  since?: string;
  until?: string;
  limit: string;
  json?: boolean;
}

/** The admin API's query parameter for each filter option. */
const FILTERS = ['subject', 'enterprise', 'app', 'action', 'since', 'until'] as const;

async function audit(options: AuditOptions): Promise<void> {
  const query = new URLSearchParams({ limit: options.limit });
  for (const name of FILTERS) {
    const value = options[name];
    if (value !== undefined) query.set(name, value);
  }
  const entries = await adminCall<AuditRecord[]>('GET', `/audit?${query.toString()}`);
  if (options.json === true) {
    console.log(printableJson(entries));
    return;
  }
  console.log('time\taction\tsubject\toperator\trequestId\tclientRequestId\toperatorId');
  for (const e of entries) {
    const when = new Date(e.createdAt).toISOString();
    console.log(
      text`${when}\t${e.action}\t${e.subject ?? '-'}\t${e.operator ?? '-'}\t${e.requestId ?? '-'}\t${e.clientRequestId ?? '-'}\t${e.operatorId ?? '-'}`,
    );
  }
}

/** `keyward audit`: the newest audit entries, filtered on the server. */
export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description('print the newest audit entries, newest first (tab-separated, with a header)')
    .option(
      '--subject <SUBJECT>',
      'only entries about this subject (an asset number, an appKey, an account…)',
    )
    .option('--enterprise <ENTERPRISE_GLOBAL_ID>', 'only entries of this enterprise')
    .option('--app <APP_ID>', 'only entries made by this application')
    .option('--action <ACTION>', 'only entries of this action (the second column)')
    .option(
      '--since <TIME>',
      'only entries from this time on: ISO-8601 (2025-01-31T12:00:00Z) or a time ago (15m, 2h, 7d)',
      (value: string) => timeFilter(value),
    )
    .option('--until <TIME>', 'only entries up to this time, written as for --since', (value: string) =>
      timeFilter(value),
    )
    .option('--limit <N>', 'at most this many entries', '100')
    .option('--json', 'print one JSON array')
    .addHelpText(
      'after',
      examples([
        'keyward audit --subject 8000000001',
        'keyward audit --enterprise ENTERPRISE_GLOBAL_ID --since 2h',
        'keyward audit --since 2025-01-01 --until 2025-02-01 --json',
      ]),
    )
    .action(audit);
}
