import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoFacts } from '../../src/cli/demo/load-demo.js';
import { runDemoJson, runShell, startDemoServer, type DemoServer } from './support/demo-server.js';

// examples/runtime as the demo prints it, against a real `keyward serve` with the demo data: it
// prints its lease, is refused a fourth seat of the lock's Simulator (three seats), and verifies
// its offline lease after the server has stopped.

let live: DemoServer | undefined;
let facts: DemoFacts;
let stateDir: string;

beforeAll(async () => {
  live = await startDemoServer();
  facts = await runDemoJson(live);
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-runtime-example-'));
});
afterAll(async () => {
  await live?.stop();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

describe('the runtime example with the demo data', () => {
  it('checks out, heartbeats, is refused the fourth seat, then verifies its lease offline', async () => {
    const online = await runShell(facts.runtime.online, { STATE_DIR: stateDir });
    expect(online.code, `${online.stdout}\n${online.stderr}`).toBe(0);
    const lines = online.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^lease [0-9a-f-]{36} \(granted\) for demo-simulator on \d+$/);
    expect(online.stdout).toMatch(/heartbeat: alive until \d{4}-/);
    expect(online.stdout).toMatch(/second machine: lease [0-9a-f-]{36}/);
    expect(online.stdout).toMatch(/third machine: lease [0-9a-f-]{36}/);
    expect(online.stdout).toContain(
      'fourth machine: refused, 90005 all 3 seats of the product are in use (3 in use)',
    );

    await live?.stop();
    live = undefined;
    const offline = await runShell(facts.runtime.offline, { STATE_DIR: stateDir });
    expect(offline.code, `${offline.stdout}\n${offline.stderr}`).toBe(0);
    expect(offline.stdout).toMatch(/^offline lease verified: demo-simulator on \d+/);

    // The kept lease, altered by one character, no longer verifies.
    const leaseFile = path.join(stateDir, 'lease.jws');
    const lease = fs.readFileSync(leaseFile, 'utf8');
    const [head, body, signature] = lease.split('.') as [string, string, string];
    const swapped = signature[10] === 'A' ? 'B' : 'A';
    const flipped = `${signature.slice(0, 10)}${swapped}${signature.slice(11)}`;
    fs.writeFileSync(leaseFile, `${head}.${body}.${flipped}`);
    const tampered = await runShell(facts.runtime.offline, { STATE_DIR: stateDir });
    expect(tampered.code).not.toBe(0);
    expect(tampered.stderr).toMatch(/signature/);
  });
});
