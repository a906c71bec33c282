import { randomBytes } from 'node:crypto';
import type { SimulationResult } from '../../domain/usage/usage-simulation.js';
import { adminCall, CliError } from '../admin-client.js';
import { text } from '../printable.js';

/** What the demo's usage step did, as `keyward demo --json` prints it. */
export interface DemoUsage {
  simulatedDays: number;
  /** The product the simulated month keeps at capacity. */
  atCapacity: string | null;
  /** Seats held now: an employee's two machines on a two-seat product, and a third refused. */
  holder: string;
  product: string;
  refused: boolean;
}

const SIMULATED_DAYS = 30;
/** Bob's cloud account licenses two seats of it: a third machine is turned away. */
const PRODUCT = 'demo-cloud-designer';

interface Envelope {
  code?: string | number;
  message?: string;
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Envelope> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Envelope & { access_token?: string };
  if (!response.ok && answer.code === undefined) {
    throw new CliError(text`demo: ${url}: HTTP ${response.status}`);
  }
  return answer;
}

async function token(baseUrl: string, app: { appKey: string; appSecret: string }, body: object) {
  const basic = Buffer.from(`${app.appKey}:${app.appSecret}`).toString('base64');
  const answer = (await post(`${baseUrl}/oauth2/token`, body, { authorization: `Basic ${basic}` })) as {
    access_token?: string;
  };
  if (answer.access_token === undefined) throw new CliError('demo: no token for the usage step');
  return answer.access_token;
}

/**
 * A month of simulated usage (the admin API writes it as rollups), then seats held now as licensed
 * software would take them: an employee starts the demo's two-seat product on two machines and a
 * third is refused, so the Usage pages show curves, refusals, a product at capacity and who holds
 * which seat from the first look.
 */
export async function loadDemoUsage(
  baseUrl: string,
  app: { appKey: string; appSecret: string },
  enterpriseGlobalId: string,
  employee: { account: string; password: string },
): Promise<DemoUsage> {
  let simulated: SimulationResult;
  try {
    simulated = await adminCall<SimulationResult>('POST', '/usage/simulate', {
      enterprise: enterpriseGlobalId,
      app: app.appKey,
      days: SIMULATED_DAYS,
    });
  } catch (error) {
    if (error instanceof CliError) throw new CliError(text`demo: simulating usage: ${error.message}`);
    throw error;
  }
  const appToken = await token(baseUrl, app, { grant_type: 'client_credentials' });
  const userToken = await token(baseUrl, app, {
    grant_type: 'password',
    username: employee.account,
    password: employee.password,
  });
  const checkOut = (machine: number) =>
    post(
      `${baseUrl}/runtime/v1/leases?g_nonce=${randomBytes(12).toString('base64url')}`,
      { crmProductId: PRODUCT, fingerprint: `DESK-${machine}-${randomBytes(4).toString('hex')}` },
      { authorization: `Bearer ${appToken}`, usertoken: userToken },
    );
  for (const machine of [1, 2]) {
    const answer = await checkOut(machine);
    if (String(answer.code) !== '0') {
      throw new CliError(text`demo: checking out ${PRODUCT}: ${String(answer.code)} ${answer.message ?? ''}`);
    }
  }
  const third = await checkOut(3);
  return {
    simulatedDays: SIMULATED_DAYS,
    atCapacity: simulated.atCapacity,
    holder: employee.account,
    product: PRODUCT,
    refused: String(third.code) === '90005',
  };
}
