import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELAY_FILES } from '../../src/domain/relay/relay-home.js';
import { readRelayRequest } from '../../src/domain/relay/relay-request.js';
import { generateEd25519, thumbprintOf } from '../../src/domain/runtime-keys/ed25519.js';
import { runCli } from '../support/server-process.js';

// `keyward relay init` as a relay's operator runs it: the first time with the vendor's JWKS, then
// again to renew; its mistakes named on stderr with exit 1 and nothing written.

let scratch: string;
let jwksFile: string;
let env: Record<string, string>;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relay-cli-'));
  const vendor = await generateEd25519();
  jwksFile = path.join(scratch, 'vendor-jwks.json');
  fs.writeFileSync(
    jwksFile,
    JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: vendor.x, kid: await thumbprintOf(vendor) }] }),
  );
  env = { KEYWARD_RELAY_FINGERPRINT: 'lab-relay-machine-01' };
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('keyward relay init', () => {
  it('makes the relay and writes a request signed by its key; run again, it keeps the relay and writes a new one', async () => {
    const dir = path.join(scratch, 'relay');
    const first = await runCli(
      [
        'relay',
        'init',
        '--dir',
        dir,
        '--vendor-jwks',
        jwksFile,
        '--ask',
        'KW-000123=10',
        '--ask',
        'KW-000124/cad-pro=2',
        '--days',
        '90',
      ],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /^made relay relay_[A-Za-z0-9_-]+ on machine lab-relay-machine-01, trusting 1 vendor key/,
    );
    expect(first.stdout).toContain('asks 2 seat(s) of KW-000124/cad-pro');
    const requestFile = path.join(dir, RELAY_FILES.request);
    const request = await readRelayRequest(fs.readFileSync(requestFile, 'utf8'), Date.now() / 1000);
    expect(request.asks.licenses).toEqual([
      { assetNum: 'KW-000123', crmProductId: null, seats: 10 },
      { assetNum: 'KW-000124', crmProductId: 'cad-pro', seats: 2 },
    ]);
    expect(request.asks.until - request.iat).toBe(90 * 86_400);
    expect(fs.statSync(requestFile).mode & 0o077).toBe(0);

    const out = path.join(scratch, 'renewal.jwt');
    const again = await runCli(
      ['relay', 'init', '--dir', dir, '--ask', 'KW-000123=12', '--days', '60', '--out', out, '--json'],
      env,
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ relayId: request.sub, made: false });
    const renewal = await readRelayRequest(fs.readFileSync(out, 'utf8'), Date.now() / 1000);
    expect(renewal.relay.key).toEqual(request.relay.key);
    expect(renewal.asks.licenses).toEqual([{ assetNum: 'KW-000123', crmProductId: null, seats: 12 }]);

    // Further ahead than a grant may be asked for: named here, by the relay, and nothing written.
    const distant = path.join(scratch, 'distant.jwt');
    const far = await runCli(
      ['relay', 'init', '--dir', dir, '--ask', 'KW-000123=1', '--until', '2099-01-01', '--out', distant],
      env,
    );
    expect(far.code).toBe(1);
    expect(far.stderr).toMatch(/asks\.until: is more than 366 days ahead/);
    expect(fs.existsSync(distant)).toBe(false);

    const shown = await runCli(['relay', 'status', '--dir', dir], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`relay ${request.sub}`);
    expect(shown.stdout).toContain('machine lab-relay-machine-01 (this one)');
    expect(shown.stdout).toContain('no grant yet');
  }, 60_000);

  it('imports no grant it cannot verify, saying why, and none into a directory with no relay', async () => {
    const dir = path.join(scratch, 'importer');
    const made = await runCli(
      ['relay', 'init', '--dir', dir, '--vendor-jwks', jwksFile, '--ask', 'KW-9=1'],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const bogus = path.join(scratch, 'bogus-grant.jwt');
    fs.writeFileSync(bogus, 'eyJhbGciOiJFZERTQSJ9.e30.AAAA\n');
    const refused = await runCli(['relay', 'import', bogus, '--dir', dir], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the grant is refused \((malformed|unknown-key|signature)\)/);
    expect(fs.existsSync(path.join(dir, 'grant.jwt'))).toBe(false);
    const nowhere = await runCli(
      ['relay', 'import', bogus, '--dir', path.join(scratch, 'no-relay-here')],
      env,
    );
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain('run keyward relay init first');
  }, 60_000);

  it('names each mistake and writes nothing', async () => {
    const dir = path.join(scratch, 'mistakes');
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--ask', 'KW-1=10'], env, /--vendor-jwks/],
      [['--vendor-jwks', jwksFile, '--ask', 'KW-1'], env, /--ask KW-1: write it as ASSET=SEATS/],
      [['--vendor-jwks', jwksFile], env, /--ask: say what the relay asks for/],
      [['--vendor-jwks', jwksFile, '--ask', 'KW-1=0'], env, /asks\.licenses\[0\]\.seats/],
      [['--vendor-jwks', jwksFile, '--ask', 'KW-1=1', '--until', 'soon'], env, /--until soon: not a date/],
      [['--vendor-jwks', path.join(scratch, 'absent.json'), '--ask', 'KW-1=1'], env, /cannot be read/],
    ];
    for (const [args, given, message] of cases) {
      const result = await runCli(['relay', 'init', '--dir', dir, ...args], given);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(fs.existsSync(path.join(dir, RELAY_FILES.identity)), args.join(' ')).toBe(false);
    }
  }, 60_000);
});
