import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

/** Where a relay keeps its files when --dir is not given. */
const DEFAULT_DIR = 'relay-data';
const DIR_HELP = `the relay's directory (default $KEYWARD_RELAY_DIR, else ./${DEFAULT_DIR})`;

/** The largest request or grant file read: either is a few kilobytes. */
const EXCHANGE_FILE_MAX_BYTES = 65_536;

interface RelayOptions {
  dir?: string;
  fingerprint?: string;
}

/** The relay's directory: --dir, else $KEYWARD_RELAY_DIR, else ./relay-data. */
function relayDir(options: RelayOptions): string {
  return options.dir ?? process.env.KEYWARD_RELAY_DIR ?? DEFAULT_DIR;
}

/** The machine's fingerprint as given (--fingerprint, else $KEYWARD_RELAY_FINGERPRINT), if it was. */
function givenFingerprint(options: RelayOptions): { fingerprint?: string } {
  const given = options.fingerprint ?? process.env.KEYWARD_RELAY_FINGERPRINT;
  return given === undefined || given === '' ? {} : { fingerprint: given };
}

/** A request, grant, report or return file's text, refused when unreadable or larger than any is. */
function exchangeFile(file: string, what: string, maxBytes = EXCHANGE_FILE_MAX_BYTES): string {
  try {
    if (fs.statSync(file).size > maxBytes) {
      throw new CliError(text`${file} is larger than ${what} can be`);
    }
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(text`${file}: cannot be read`);
  }
}

/**
 * A request, grant or return given as its file or as its typed code (read out across the gap):
 * a path that names a file is the file; anything else that reads as a code is the code.
 */
async function fileOrCode(given: string, what: string): Promise<string> {
  const { isTypedCode } = await import('../../domain/relay/relay-typed.js');
  if (fs.existsSync(given) || !isTypedCode(given)) return exchangeFile(given, what);
  return given.trim();
}

/** The relay's own refusals (its directory, its request) said as the CLI says mistakes. */
async function refusalsAsCliErrors<T>(run: () => Promise<T>): Promise<T> {
  const { RelayHomeError } = await import('../../domain/relay/relay-home.js');
  const { RelayRequestError } = await import('../../domain/relay/relay-request.js');
  try {
    return await run();
  } catch (error) {
    if (error instanceof RelayHomeError || error instanceof RelayRequestError)
      throw new CliError(error.message);
    throw error;
  }
}

/** A license of a request or a grant, with the shares of its usage limits it carries. */
interface AskedLicense {
  assetNum: string;
  crmProductId: string | null;
  seats: number;
  timeSeconds?: number;
  amount?: number;
}

/** `N seat(s) of ASSET[/PRODUCT], T s of its time, A of its amount`: one license of a request or a grant. */
function seatsOf(license: AskedLicense): string {
  const product = license.crmProductId === null ? '' : `/${license.crmProductId}`;
  const time = license.timeSeconds === undefined ? '' : `, ${license.timeSeconds} s of its time`;
  const amount = license.amount === undefined ? '' : `, ${license.amount} of its amount`;
  return text`${license.seats} seat(s) of ${license.assetNum}${product}${time}${amount}`;
}

interface InitOptions extends RelayOptions {
  vendorJwks?: string;
  ask: string[];
  until?: string;
  days?: string;
  out?: string;
  json?: boolean;
}

/** A repeated option's values in order (`--ask` again for each license, `--machine` for each machine). */
function collected(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const TIME_UNITS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * `ASSET[/PRODUCT]=SEATS[,time=N[s|m|h|d]][,amount=N]`: seats of a license, and the relay's share
 * of its usage limits where it has them (the vendor holds that much of the license for the grant).
 */
function asksOf(given: string[]): AskedLicense[] {
  const form =
    'ASSET=SEATS or ASSET/PRODUCT=SEATS, then ,time=N[s|m|h|d] and ,amount=N for a license with usage limits';
  if (given.length === 0) throw new CliError(`--ask: say what the relay asks for, as ${form}`);
  return given.map((ask) => {
    const match = /^([^/=,\s]+)(?:\/([^=,\s]+))?=(\d{1,7})((?:,[a-z]+=[^,\s]+)*)$/.exec(ask.trim());
    if (match === null) throw new CliError(text`--ask ${ask}: write it as ${form}`);
    const license: AskedLicense = {
      assetNum: match[1] as string,
      crmProductId: match[2] ?? null,
      seats: Number(match[3]),
    };
    for (const part of (match[4] ?? '').split(',').filter((p) => p !== '')) {
      const [name, value = ''] = part.split('=');
      const time = /^(\d{1,10})([smhd]?)$/.exec(value);
      if (name === 'time' && time !== null && license.timeSeconds === undefined) {
        license.timeSeconds = Number(time[1]) * (TIME_UNITS[time[2] ?? ''] ?? 1);
      } else if (name === 'amount' && /^\d{1,10}$/.test(value) && license.amount === undefined) {
        license.amount = Number(value);
      } else {
        throw new CliError(text`--ask ${ask}: ${part} is not time=N[s|m|h|d] or amount=N, once each`);
      }
    }
    return license;
  });
}

function untilOf(options: InitOptions, now: number): number {
  if (options.until !== undefined && options.days !== undefined)
    throw new CliError('give --until or --days, not both');
  if (options.until !== undefined) {
    const at = Date.parse(options.until);
    if (Number.isNaN(at))
      throw new CliError(text`--until ${options.until}: not a date (2027-01-31 or an ISO time)`);
    return Math.floor(at / 1000);
  }
  const days = Number(options.days ?? '30');
  if (!Number.isInteger(days) || days < 1) throw new CliError('--days: a whole number of days from 1');
  return Math.floor(now / 1000) + days * 86_400;
}

async function init(options: InitOptions): Promise<void> {
  // Loaded here: the other commands never pay for jose.
  const { initRelay } = await import('../../domain/relay/relay-home.js');
  const now = Date.now();
  const dir = relayDir(options);
  let vendorJwks: { text: string; source: string } | undefined;
  if (options.vendorJwks !== undefined) {
    try {
      vendorJwks = { text: fs.readFileSync(options.vendorJwks, 'utf8'), source: options.vendorJwks };
    } catch {
      throw new CliError(text`--vendor-jwks ${options.vendorJwks}: cannot be read`);
    }
  }
  const result = await refusalsAsCliErrors(() =>
    initRelay({
      dir,
      ...(vendorJwks === undefined ? {} : { vendorJwks }),
      ...givenFingerprint(options),
      asks: { licenses: asksOf(options.ask), until: untilOf(options, now) },
      now,
    }),
  );
  const out = options.out ?? path.join(dir, 'request.jwt');
  fs.writeFileSync(out, `${result.request}\n`, { mode: 0o600 });
  const { relayRequestCode } = await import('../../domain/relay/relay-typed.js');
  const code = await relayRequestCode(result.request);
  if (options.json === true) {
    console.log(
      printableJson({
        ...result.identity,
        made: result.made,
        requestFile: out,
        requestCode: code,
        asks: result.claims.asks,
      }),
    );
    return;
  }
  const { identity } = result;
  console.log(
    text`${result.made ? 'made relay' : 'relay'} ${identity.relayId} on machine ${identity.fingerprint}, trusting ${result.vendorKeys} vendor key(s)`,
  );
  for (const ask of result.claims.asks.licenses) console.log(`  asks ${seatsOf(ask)}`);
  console.log(text`  until ${new Date(result.claims.asks.until * 1000).toISOString()}`);
  console.log(text`request: ${out} (carry it to the vendor, who answers it with a pool grant)`);
  if (code !== null) console.log(text`or read out its typed code: ${code}`);
}

interface GrantAnswer {
  grantId: string;
  relayId: string;
  token: string;
  startsAt: number;
  endsAt: number;
  licenses: AskedLicense[];
  code: string | null;
  machines: string[] | null;
  overage: { policy: string; seats: number };
  made: boolean;
}

interface GrantOptions {
  out?: string;
  json?: boolean;
  machine: string[];
  machinesFile?: string;
  overage?: string;
}

/** --machine FP (again for each) and --machines-file FILE (one per line): the grant's list, if any. */
function machinesOf(options: GrantOptions): string[] | undefined {
  const listed = [...options.machine];
  if (options.machinesFile !== undefined) {
    const lines = exchangeFile(options.machinesFile, 'a list of machines', 1024 * 1024).split(/\r?\n/);
    listed.push(...lines.map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#')));
  }
  return listed.length === 0 ? undefined : listed;
}

function overageOf(options: GrantOptions): number | undefined {
  if (options.overage === undefined) return undefined;
  if (!/^\d{1,7}$/.test(options.overage)) throw new CliError('--overage: a whole number of seats from 0');
  return Number(options.overage);
}

async function grant(given: string, options: GrantOptions): Promise<void> {
  const request = await fileOrCode(given, 'a relay request');
  const machines = machinesOf(options);
  const overage = overageOf(options);
  const answer = await adminCall<GrantAnswer>('POST', '/relays/grants', {
    request: request.trim(),
    ...(machines === undefined ? {} : { machines }),
    ...(overage === undefined ? {} : { overage }),
  });
  const out = options.out ?? `${answer.relayId}-grant.jwt`;
  // The same grant answered again is written again: it holds nothing secret.
  fs.writeFileSync(out, `${answer.token}\n`, { mode: 0o644 });
  if (options.json === true) {
    console.log(printableJson({ ...answer, grantFile: out }));
    return;
  }
  console.log(
    text`${answer.made ? 'granted' : 'already granted'} ${answer.grantId} to relay ${answer.relayId}, until ${new Date(answer.endsAt).toISOString()}`,
  );
  for (const license of answer.licenses) console.log(`  ${seatsOf(license)}`);
  console.log(
    text`  machines: ${answer.machines === null ? 'any' : String(answer.machines.length)}; overage: ${answer.overage.policy === 'allow' ? `${answer.overage.seats} seat(s) per product, reported` : 'refused'}`,
  );
  console.log(text`grant: ${out} (carry it to the relay: keyward relay import ${out})`);
  if (answer.code !== null) console.log(text`or read out its typed code: ${answer.code}`);
}

async function importAnswer(file: string, options: RelayOptions & { json?: boolean }): Promise<void> {
  const { importGrant } = await import('../../domain/relay/relay-import.js');
  const grantText = await fileOrCode(file, 'a pool grant');
  const result = await refusalsAsCliErrors(() =>
    importGrant({ dir: relayDir(options), grant: grantText, now: Date.now(), ...givenFingerprint(options) }),
  );
  const { claims } = result;
  if (options.json === true) {
    console.log(
      printableJson({
        grantId: claims.jti,
        imported: result.imported,
        endsAt: claims.exp * 1000,
        licenses: claims.licenses,
      }),
    );
    return;
  }
  console.log(
    text`${result.imported ? 'imported' : 'already holds'} grant ${claims.jti}, until ${new Date(claims.exp * 1000).toISOString()}`,
  );
  for (const license of claims.licenses) console.log(`  ${seatsOf(license)}`);
}

async function status(options: RelayOptions & { json?: boolean }): Promise<void> {
  const { relayStatus } = await import('../../domain/relay/relay-import.js');
  const state = await refusalsAsCliErrors(async () =>
    relayStatus(relayDir(options), Date.now(), givenFingerprint(options).fingerprint),
  );
  if (options.json === true) {
    console.log(printableJson(state));
    return;
  }
  console.log(text`relay ${state.relayId}`);
  console.log(
    text`  machine ${state.fingerprint}${state.thisMachine ? ' (this one)' : ' (NOT this machine: it will not serve here)'}`,
  );
  console.log(text`  trusts ${state.vendorKeys} vendor key(s)`);
  if (state.grant === null) {
    console.log('  no grant yet: carry request.jwt to the vendor, then keyward relay import GRANT');
  } else {
    const ends = new Date(state.grant.endsAt).toISOString();
    console.log(text`  grant ${state.grant.grantId}, ${state.grant.ended ? 'ended' : 'until'} ${ends}`);
    for (const license of state.grant.licenses) console.log(`    ${seatsOf(license)}`);
  }
}

async function serveRelay(options: RelayOptions & { port?: string; host?: string }): Promise<void> {
  const { openRelay } = await import('../../domain/relay/relay-import.js');
  const { serve } = await import('../../server.js');
  const dir = path.resolve(relayDir(options));
  const opened = await refusalsAsCliErrors(() =>
    openRelay(dir, Date.now(), givenFingerprint(options).fingerprint),
  );
  // The listener's settings are the environment's, as for keyward serve; the flags set them.
  if (options.port !== undefined) process.env.PORT = options.port;
  if (options.host !== undefined) process.env.HOST = options.host;
  await serve(opened);
}

/**
 * The running relay's admin API: KEYWARD_URL as for every command, and its admin key read from
 * the relay's own data directory unless KEYWARD_ADMIN_KEY or DATA_DIR says otherwise.
 */
function atTheRelay(options: RelayOptions): void {
  if ((process.env.KEYWARD_ADMIN_KEY ?? '') === '' && (process.env.DATA_DIR ?? '') === '') {
    process.env.DATA_DIR = path.join(relayDir(options), 'data');
  }
}

interface WrittenFile {
  token: string;
}

function writeExchange(file: string, answer: WrittenFile): void {
  fs.writeFileSync(file, `${answer.token}\n`, { mode: 0o644 });
}

async function report(options: RelayOptions & { out?: string; json?: boolean }): Promise<void> {
  atTheRelay(options);
  const written = await adminCall<
    WrittenFile & { reportId: string; hours: number; from: number | null; to: number | null }
  >('POST', '/relay/report');
  const out = options.out ?? `report-${written.reportId}.jwt`;
  writeExchange(out, written);
  if (options.json === true) {
    console.log(
      printableJson({
        reportId: written.reportId,
        hours: written.hours,
        from: written.from,
        to: written.to,
        reportFile: out,
      }),
    );
    return;
  }
  const span =
    written.from === null || written.to === null
      ? 'no usage yet'
      : `${new Date(written.from).toISOString()} to ${new Date(written.to).toISOString()}`;
  console.log(text`report ${written.reportId}: ${written.hours} hour(s) of usage, ${span}`);
  console.log(text`report: ${out} (carry it to the vendor: keyward relay import-report ${out})`);
}

async function importReport(file: string, options: { json?: boolean }): Promise<void> {
  const body = exchangeFile(file, 'a relay report', 8 * 1024 * 1024);
  const answer = await adminCall<{
    reportId: string;
    relayId: string;
    hours: number;
    peakSeats: number;
    overagePeak: number;
    seatHours: number;
    refused: number;
  }>('POST', '/relays/reports', { report: body.trim() });
  if (options.json === true) {
    console.log(printableJson(answer));
    return;
  }
  console.log(
    text`imported report ${answer.reportId} of relay ${answer.relayId}: ${answer.hours} hour(s), peak ${answer.peakSeats} seat(s), ${answer.seatHours} seat-hour(s), ${answer.refused} refused`,
  );
  if (answer.overagePeak > 0) {
    console.log(text`  overage: up to ${answer.overagePeak} seat(s) past the grant in an hour`);
  }
}

async function giveBack(options: RelayOptions & { out?: string; json?: boolean }): Promise<void> {
  atTheRelay(options);
  const written = await adminCall<
    WrittenFile & {
      returnId: string;
      grantId: string;
      withdrawn: number;
      code: string | null;
      used: Array<{ assetNum: string; crmProductId: string; timeSeconds?: number; amount?: number }>;
    }
  >('POST', '/relay/return');
  const out = options.out ?? `return-${written.grantId}.jwt`;
  writeExchange(out, written);
  if (options.json === true) {
    console.log(
      printableJson({
        returnId: written.returnId,
        grantId: written.grantId,
        returnFile: out,
        returnCode: written.code,
        used: written.used,
      }),
    );
    return;
  }
  console.log(text`returned grant ${written.grantId}: this relay gives none of its seats from now on`);
  for (const u of written.used) {
    const parts = [
      ...(u.timeSeconds === undefined ? [] : [`${u.timeSeconds} s of its time`]),
      ...(u.amount === undefined ? [] : [`${u.amount} of its amount`]),
    ];
    console.log(
      text`  used ${parts.join(', ')} of ${u.assetNum}/${u.crmProductId}: the vendor gives back the rest`,
    );
  }
  console.log(text`return: ${out} (carry it to the vendor: keyward relay import-return ${out})`);
  if (written.code !== null) console.log(text`or read out its typed code: ${written.code}`);
}

async function importReturn(file: string, options: { json?: boolean }): Promise<void> {
  const body = await fileOrCode(file, 'a relay return');
  const answer = await adminCall<{
    grantId: string;
    relayId: string;
    returnedAt: number;
    made: boolean;
    givenBack: Array<{
      assetNum: string;
      crmProductId: string;
      timeSeconds: number | null;
      amount: number | null;
    }>;
  }>('POST', '/relays/returns', { return: body.trim() });
  if (options.json === true) {
    console.log(printableJson(answer));
    return;
  }
  console.log(
    text`${answer.made ? 'returned' : 'already returned'}: grant ${answer.grantId} of relay ${answer.relayId}, its seats free since ${new Date(answer.returnedAt).toISOString()}`,
  );
  for (const back of answer.givenBack) {
    const parts = [
      ...(back.timeSeconds === null ? [] : [`${back.timeSeconds} s of its time`]),
      ...(back.amount === null ? [] : [`${back.amount} of its amount`]),
    ];
    console.log(text`  gave back ${parts.join(', ')} to ${back.assetNum}/${back.crmProductId}`);
  }
}

async function list(options: { json?: boolean }): Promise<void> {
  const { grants } = await adminCall<{
    grants: Array<{
      grantId: string;
      relayId: string;
      seats: number;
      endsAt: number;
      state: string;
      lastReport: { issuedAt: number; seatHours: number } | null;
    }>;
  }>('GET', '/relays/grants');
  if (options.json === true) {
    console.log(printableJson(grants));
    return;
  }
  if (grants.length === 0) console.log('no relay has been granted seats');
  for (const g of grants) {
    const last =
      g.lastReport === null
        ? 'no report yet'
        : `last report ${new Date(g.lastReport.issuedAt).toISOString()}`;
    console.log(
      text`${g.relayId}  grant ${g.grantId}  ${g.seats} seat(s)  ${g.state} ${new Date(g.endsAt).toISOString()}  ${last}`,
    );
  }
}

/** `keyward relay …`: a relay for a closed network (docs/relay.md). */
export function registerRelayCommands(program: Command): void {
  const relay = program
    .command('relay')
    .description(
      'a relay: a small Keyward inside a closed network, handing out the seats a vendor granted it',
    );
  relay
    .command('init')
    .description(
      "make the relay's directory (its id, its key, the vendor's keys) on this machine, or keep it, and write a signed request for seats",
    )
    .option('--dir <DIR>', DIR_HELP)
    .option('--vendor-jwks <FILE>', "the vendor's JWKS (its /runtime/v1/jwks): needed the first time")
    .option(
      '--ask <ASSET[/PRODUCT]=SEATS>',
      'seats of a lock, of one product or of every one (repeat it)',
      collected,
      [],
    )
    .option('--until <DATE>', 'the end of the grant asked for')
    .option('--days <N>', 'or its length in days from now (default 30)')
    .option('--fingerprint <TEXT>', "this machine's fingerprint, where it has no machine id (a container)")
    .option('--out <FILE>', 'where to write the request (default DIR/request.jwt)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      examples([
        'keyward relay init --vendor-jwks vendor-jwks.json --ask KW-000123=10 --days 90',
        'keyward relay init --ask KW-000123/cad-pro=5 --ask KW-000124=2 --until 2027-06-30',
      ]),
    )
    .action(init);
  relay
    .command('grant')
    .description(
      "answer a relay's request with a pool grant signed by this server, holding its seats until the grant ends",
    )
    .argument('<REQUEST>', "the relay's request file (request.jwt), or its typed code")
    .option(
      '--machine <FINGERPRINT>',
      'a machine that may check out from the relay (again for each)',
      collected,
      [],
    )
    .option('--machines-file <FILE>', 'the machines that may check out, one fingerprint per line')
    .option('--overage <N>', 'check-outs each product may take past its seats, reported (default 0: refused)')
    .option('--out <FILE>', 'where to write the grant (default RELAY-grant.jwt)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      examples([
        'keyward relay grant request.jwt',
        'keyward relay grant request.jwt --out lab-grant.jwt',
        'keyward relay grant request.jwt --machines-file lab-machines.txt --overage 2',
        'keyward relay grant 7ZK2Q4-9XP0MC-…',
      ]),
    )
    .action(grant);
  relay
    .command('import')
    .description(
      "check the vendor's pool grant against the pinned vendor keys, this relay and this machine, and keep it",
    )
    .argument('<GRANT>', 'the grant file the vendor answered, or its typed code')
    .option('--dir <DIR>', DIR_HELP)
    .option('--fingerprint <TEXT>', "this machine's fingerprint, as given to relay init")
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay import relay_x-grant.jwt']))
    .action(importAnswer);
  relay
    .command('status')
    .description("print the relay's id, its machine, the vendor keys it trusts and the grant it holds")
    .option('--dir <DIR>', DIR_HELP)
    .option('--fingerprint <TEXT>', "this machine's fingerprint, as given to relay init")
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay status', 'keyward relay status --json']))
    .action(status);
  relay
    .command('serve')
    .description(
      "serve the runtime API to the closed network from the relay's embedded database: the grant's seats, leases signed by the relay's key",
    )
    .option('--dir <DIR>', DIR_HELP)
    .option('--fingerprint <TEXT>', "this machine's fingerprint, as given to relay init")
    .option('--port <PORT>', 'the port to listen on (default $PORT, else 8080)')
    .option('--host <HOST>', 'the address to listen on (default $HOST, else 127.0.0.1)')
    .addHelpText(
      'after',
      examples([
        'keyward relay serve',
        'keyward relay serve --dir /var/lib/keyward-relay --host 0.0.0.0 --port 8090',
      ]),
    )
    .action(serveRelay);
  relay
    .command('report')
    .description(
      "write the running relay's usage (per hour, license and product) as a report signed by its key",
    )
    .option('--dir <DIR>', DIR_HELP)
    .option('--out <FILE>', 'where to write the report (default report-ID.jwt)')
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['KEYWARD_URL=http://127.0.0.1:8090 keyward relay report']))
    .action(report);
  relay
    .command('import-report')
    .description(
      "import a relay's usage report at the vendor: its hours join the usage pages, marked via relay",
    )
    .argument('<FILE>', 'the report file the relay wrote')
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay import-report report-1b2c.jwt']))
    .action(importReport);
  relay
    .command('return')
    .description(
      "give the running relay's grant back before its end: it stops giving the seats and signs a return",
    )
    .option('--dir <DIR>', DIR_HELP)
    .option('--out <FILE>', 'where to write the return (default return-GRANT.jwt)')
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['KEYWARD_URL=http://127.0.0.1:8090 keyward relay return']))
    .action(giveBack);
  relay
    .command('import-return')
    .description("import a relay's return at the vendor: the seats its grant held are free at once")
    .argument('<FILE>', 'the return file the relay wrote, or its typed code')
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay import-return return-9f1e.jwt']))
    .action(importReturn);
  relay
    .command('list')
    .description("list the grants answered to relays: seats, ends, state and each relay's last report")
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay list']))
    .action(list);
}
