import fs from 'node:fs';
import type { Command } from 'commander';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface Activation {
  leaseId: string;
  appKey: string;
  assetNum: string;
  crmProductId: string;
  days: number;
  expiresAt: number;
  expBound: string;
  code: string;
  file: unknown;
}

interface OfflineMachine {
  leaseId: string;
  appKey: string;
  assetNum: string;
  crmProductId: string | null;
  enterpriseName: string | null;
  fingerprint: string;
  expiresAt: number;
  via: string | null;
  returnedAt: number | null;
}

/** A request's code as given, or the text of the file it names. */
function requestText(given: string[]): string {
  const joined = given.join(' ').trim();
  if (given.length === 1 && fs.existsSync(joined) && fs.statSync(joined).isFile()) {
    const stat = fs.statSync(joined);
    if (stat.size > 16_384) throw new CliError(`${joined} is larger than an activation request can be`);
    return fs.readFileSync(joined, 'utf8');
  }
  return joined;
}

async function activate(request: string[], options: { out?: string; json?: boolean }): Promise<void> {
  const answer = await adminCall<Activation>('POST', '/runtime/activations', {
    request: requestText(request),
  });
  if (options.out !== undefined) {
    // The answer file holds a lease: readable by its owner alone until it is carried to the machine.
    fs.writeFileSync(options.out, `${JSON.stringify(answer.file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  }
  if (options.json === true) {
    console.log(printableJson(answer));
    return;
  }
  const until = new Date(answer.expiresAt).toISOString();
  console.log(
    text`lease ${answer.leaseId}: ${answer.crmProductId} on ${answer.assetNum}, ${answer.days} days, until ${until} (${answer.expBound})`,
  );
  if (options.out !== undefined) console.log(text`answer file: ${options.out}`);
  console.log('answer code (type it on the machine):');
  console.log(text`${answer.code}`);
}

async function giveBack(code: string[], options: { json?: boolean }): Promise<void> {
  const returned = await adminCall<{ leaseId: string; assetNum: string }>(
    'POST',
    '/runtime/activations/return',
    {
      code: code.join(' '),
    },
  );
  if (options.json === true) console.log(printableJson(returned));
  else console.log(text`the seat of lease ${returned.leaseId} on ${returned.assetNum} is free again`);
}

async function offline(options: { json?: boolean; limit: string }): Promise<void> {
  const rows = await adminCall<OfflineMachine[]>(
    'GET',
    `/runtime/offline-machines?limit=${encodeURIComponent(options.limit)}`,
  );
  if (options.json === true) {
    console.log(printableJson(rows));
    return;
  }
  console.log('lease\tenterprise\tasset\tproduct\tmachine\tseatHeldUntil\thow');
  for (const m of rows) {
    const how = `${m.via ?? 'online'}${m.returnedAt === null ? '' : ' (returned)'}`;
    console.log(
      text`${m.leaseId}\t${m.enterpriseName ?? '-'}\t${m.assetNum}\t${m.crmProductId ?? '-'}\t${m.fingerprint}\t${new Date(m.expiresAt).toISOString()}\t${how}`,
    );
  }
}

/** `keyward leases activate | return | offline`: offline activation by the operator (docs/activation.md). */
export function registerActivationCommands(leases: Command): void {
  leases
    .command('activate')
    .description(
      "turn an offline machine's activation request (its typed code, or its request file) into a signed lease",
    )
    .argument('<REQUEST...>', 'the typed code, or the path of the request file')
    .option('--out <FILE>', 'also write the answer file here (mode 0600; never over an existing file)')
    .option('--json', 'print the whole answer as one JSON object')
    .addHelpText(
      'after',
      examples([
        'keyward leases activate 7ZK2Q4-9XP0MC-…',
        'keyward leases activate request.json --out answer.json',
      ]),
    )
    .action(activate);
  leases
    .command('return')
    .description(
      "free the seat of an activated lease by the machine's return code, where its app allows early return",
    )
    .argument('<CODE...>', 'the return code the machine showed')
    .option('--json', 'print one JSON object')
    .action(giveBack);
  leases
    .command('offline')
    .description(
      'print the machines holding a seat by an offline lease, activated or checked out (tab-separated)',
    )
    .option('--limit <N>', 'at most this many', '200')
    .option('--json', 'print one JSON array')
    .action(offline);
}
