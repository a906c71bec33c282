import { parseArgs } from 'node:util';
import type { AuditRecord } from '../../domain/audit/audit.repository.js';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';

/** `keyward audit [--subject ASSET_NUM] [--limit N] [--json]`: the newest audit entries. */
export async function auditCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      subject: { type: 'string' },
      limit: { type: 'string', default: '100' },
      json: { type: 'boolean', default: false },
    },
  });
  const query = new URLSearchParams({ limit: values.limit });
  if (values.subject !== undefined) query.set('subject', values.subject);
  const entries = await adminCall<AuditRecord[]>('GET', `/audit?${query.toString()}`);
  if (values.json) {
    console.log(printableJson(entries));
    return;
  }
  for (const e of entries) {
    const when = new Date(e.createdAt).toISOString();
    console.log(
      text`${when}\t${e.action}\t${e.subject ?? '-'}\t${e.operator ?? '-'}\t${e.requestId ?? '-'}\t${e.clientRequestId ?? '-'}`,
    );
  }
}
