import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

/** Where a relay keeps its files when --dir is not given. */
const DEFAULT_DIR = 'relay-data';

interface InitOptions {
  dir?: string;
  vendorJwks?: string;
  ask: string[];
  until?: string;
  days?: string;
  fingerprint?: string;
  out?: string;
  json?: boolean;
}

/** `--ask ASSET=SEATS` or `--ask ASSET/PRODUCT=SEATS`: one license's seats, every product or one. */
function parseAsk(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function asksOf(given: string[]): Array<{ assetNum: string; crmProductId: string | null; seats: number }> {
  if (given.length === 0)
    throw new CliError('--ask: say what the relay asks for, as ASSET=SEATS or ASSET/PRODUCT=SEATS');
  return given.map((ask) => {
    const match = /^([^/=\s]+)(?:\/([^=\s]+))?=(\d{1,7})$/.exec(ask.trim());
    if (match === null)
      throw new CliError(text`--ask ${ask}: write it as ASSET=SEATS or ASSET/PRODUCT=SEATS`);
    return { assetNum: match[1] as string, crmProductId: match[2] ?? null, seats: Number(match[3]) };
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
  const { initRelay, RelayHomeError } = await import('../../domain/relay/relay-home.js');
  const { RelayRequestError } = await import('../../domain/relay/relay-request.js');
  const now = Date.now();
  const dir = options.dir ?? process.env.KEYWARD_RELAY_DIR ?? DEFAULT_DIR;
  let vendorJwks: { text: string; source: string } | undefined;
  if (options.vendorJwks !== undefined) {
    try {
      vendorJwks = { text: fs.readFileSync(options.vendorJwks, 'utf8'), source: options.vendorJwks };
    } catch {
      throw new CliError(text`--vendor-jwks ${options.vendorJwks}: cannot be read`);
    }
  }
  const fingerprint = options.fingerprint ?? process.env.KEYWARD_RELAY_FINGERPRINT;
  let result: Awaited<ReturnType<typeof initRelay>>;
  try {
    result = await initRelay({
      dir,
      ...(vendorJwks === undefined ? {} : { vendorJwks }),
      ...(fingerprint === undefined || fingerprint === '' ? {} : { fingerprint }),
      asks: { licenses: asksOf(options.ask), until: untilOf(options, now) },
      now,
    });
  } catch (error) {
    if (error instanceof RelayHomeError || error instanceof RelayRequestError)
      throw new CliError(error.message);
    throw error;
  }
  const out = options.out ?? path.join(dir, 'request.jwt');
  fs.writeFileSync(out, `${result.request}\n`, { mode: 0o600 });
  if (options.json === true) {
    console.log(
      printableJson({ ...result.identity, made: result.made, requestFile: out, asks: result.claims.asks }),
    );
    return;
  }
  const { identity } = result;
  console.log(
    text`${result.made ? 'made relay' : 'relay'} ${identity.relayId} on machine ${identity.fingerprint}, trusting ${result.vendorKeys} vendor key(s)`,
  );
  for (const ask of result.claims.asks.licenses) {
    console.log(
      text`  asks ${ask.seats} seat(s) of ${ask.assetNum}${ask.crmProductId === null ? '' : `/${ask.crmProductId}`}`,
    );
  }
  console.log(text`  until ${new Date(result.claims.asks.until * 1000).toISOString()}`);
  console.log(text`request: ${out} (carry it to the vendor, who answers it with a pool grant)`);
}

interface GrantAnswer {
  grantId: string;
  relayId: string;
  token: string;
  startsAt: number;
  endsAt: number;
  licenses: Array<{ assetNum: string; crmProductId: string | null; seats: number }>;
  made: boolean;
}

/** The largest request file read: a relay's request is a few kilobytes. */
const REQUEST_FILE_MAX_BYTES = 65_536;

async function grant(file: string, options: { out?: string; json?: boolean }): Promise<void> {
  let request: string;
  try {
    if (fs.statSync(file).size > REQUEST_FILE_MAX_BYTES)
      throw new CliError(text`${file} is larger than a relay request can be`);
    request = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(text`${file}: cannot be read`);
  }
  const answer = await adminCall<GrantAnswer>('POST', '/relays/grants', { request: request.trim() });
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
  for (const license of answer.licenses) {
    console.log(
      text`  ${license.seats} seat(s) of ${license.assetNum}${license.crmProductId === null ? '' : `/${license.crmProductId}`}`,
    );
  }
  console.log(text`grant: ${out} (carry it to the relay: keyward relay import ${out})`);
}

async function importAnswer(
  file: string,
  options: { dir?: string; fingerprint?: string; json?: boolean },
): Promise<void> {
  const { importGrant } = await import('../../domain/relay/relay-import.js');
  const { RelayHomeError } = await import('../../domain/relay/relay-home.js');
  let grantText: string;
  try {
    if (fs.statSync(file).size > REQUEST_FILE_MAX_BYTES)
      throw new CliError(text`${file} is larger than a pool grant can be`);
    grantText = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(text`${file}: cannot be read`);
  }
  const fingerprint = options.fingerprint ?? process.env.KEYWARD_RELAY_FINGERPRINT;
  let result: Awaited<ReturnType<typeof importGrant>>;
  try {
    result = await importGrant({
      dir: options.dir ?? process.env.KEYWARD_RELAY_DIR ?? DEFAULT_DIR,
      grant: grantText,
      now: Date.now(),
      ...(fingerprint === undefined || fingerprint === '' ? {} : { fingerprint }),
    });
  } catch (error) {
    if (error instanceof RelayHomeError) throw new CliError(error.message);
    throw error;
  }
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
  for (const license of claims.licenses) {
    console.log(
      text`  ${license.seats} seat(s) of ${license.assetNum}${license.crmProductId === null ? '' : `/${license.crmProductId}`}`,
    );
  }
}

async function status(options: { dir?: string; fingerprint?: string; json?: boolean }): Promise<void> {
  const { relayStatus } = await import('../../domain/relay/relay-import.js');
  const { RelayHomeError } = await import('../../domain/relay/relay-home.js');
  const fingerprint = options.fingerprint ?? process.env.KEYWARD_RELAY_FINGERPRINT;
  let state: ReturnType<typeof relayStatus>;
  try {
    state = relayStatus(
      options.dir ?? process.env.KEYWARD_RELAY_DIR ?? DEFAULT_DIR,
      Date.now(),
      fingerprint === undefined || fingerprint === '' ? undefined : fingerprint,
    );
  } catch (error) {
    if (error instanceof RelayHomeError) throw new CliError(error.message);
    throw error;
  }
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
    for (const license of state.grant.licenses) {
      console.log(
        text`    ${license.seats} seat(s) of ${license.assetNum}${license.crmProductId === null ? '' : `/${license.crmProductId}`}`,
      );
    }
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
    .option('--dir <DIR>', `the relay's directory (default $KEYWARD_RELAY_DIR, else ./${DEFAULT_DIR})`)
    .option('--vendor-jwks <FILE>', "the vendor's JWKS (its /runtime/v1/jwks): needed the first time")
    .option(
      '--ask <ASSET[/PRODUCT]=SEATS>',
      'seats of a lock, of one product or of every one (repeat it)',
      parseAsk,
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
    .argument('<REQUEST>', "the relay's request file (request.jwt)")
    .option('--out <FILE>', 'where to write the grant (default RELAY-grant.jwt)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      examples(['keyward relay grant request.jwt', 'keyward relay grant request.jwt --out lab-grant.jwt']),
    )
    .action(grant);
  relay
    .command('import')
    .description(
      "check the vendor's pool grant against the pinned vendor keys, this relay and this machine, and keep it",
    )
    .argument('<GRANT>', 'the grant file the vendor answered')
    .option('--dir <DIR>', `the relay's directory (default $KEYWARD_RELAY_DIR, else ./${DEFAULT_DIR})`)
    .option('--fingerprint <TEXT>', "this machine's fingerprint, as given to relay init")
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay import relay_x-grant.jwt']))
    .action(importAnswer);
  relay
    .command('status')
    .description("print the relay's id, its machine, the vendor keys it trusts and the grant it holds")
    .option('--dir <DIR>', `the relay's directory (default $KEYWARD_RELAY_DIR, else ./${DEFAULT_DIR})`)
    .option('--fingerprint <TEXT>', "this machine's fingerprint, as given to relay init")
    .option('--json', 'print one JSON object')
    .addHelpText('after', examples(['keyward relay status', 'keyward relay status --json']))
    .action(status);
}
