import type { DemoNumbers } from './data-set.js';
import type { DemoFacts } from './load-demo.js';

/**
 * Shell lines to paste, in this order: `server` exports $KEYWARD_URL (the server the demo loaded),
 * the two logins set $TOKEN and $USER_TOKEN, the calls use them.
 */
export interface CurlCommands {
  server: string;
  token: string;
  userToken: string;
  order: string;
  member: string;
}

/** The variables the tour (docs/tour.md) uses, named as it names them. */
export interface TourVariables {
  APP_KEY: string;
  /** The demo app's secret: the tour's licensed program (a C example) signs in with it. */
  APP_SECRET: string;
  CHANNEL: string;
  ENTERPRISE: string;
  LICENSE_ORDER: string;
  LOCK: string;
  LOCK_ID: string;
  EMPLOYEE: string;
  SPARE: string;
  LENT_LOCK: string;
  LEND_ASSET: string;
}

type Facts = Omit<DemoFacts, 'curl' | 'tour' | 'runtime'>;

// No jq needed: the token endpoint's answer is one line of JSON and tokens are base64url.
const ACCESS_TOKEN = `sed -E 's/.*"access_token":"([^"]+)".*/\\1/'`;
const NONCE = 'g_nonce=$(openssl rand -hex 12)';
/**
 * How the README and docs/ name the server in every command: the first line exports it, and no
 * default stands in for it (a default port quietly called another server when PORT was set).
 */
const SERVER = '$KEYWARD_URL';
/** A refused connection or an HTTP error is said on stderr, not hidden behind an empty token. */
const CURL = 'curl -sS --fail-with-body';

/** A word the shell takes as it is, else the text in single quotes. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

export function curlCommands(facts: Facts): CurlCommands {
  const { baseUrl, app, admin, enterprise } = facts;
  const login = `${CURL} -u '${app.appKey}:${app.appSecret}'`;
  return {
    server: `export KEYWARD_URL=${shellWord(baseUrl)}`,
    token: `TOKEN=$(${login} -d grant_type=client_credentials "${SERVER}/oauth2/token" | ${ACCESS_TOKEN})`,
    userToken:
      `USER_TOKEN=$(${login} -d grant_type=password -d username='${admin.account}' ` +
      `-d password='${admin.password}' "${SERVER}/oauth2/token" | ${ACCESS_TOKEN})`,
    order:
      `${CURL} "${SERVER}/order/api/order/v1/asset/${enterprise.enterpriseGlobalId}/list?${NONCE}" ` +
      `-H "Authorization: Bearer $TOKEN"`,
    member:
      `${CURL} "${SERVER}/me/api/v1/enterprise/${enterprise.enterpriseGlobalId}/asset/assetNums?${NONCE}" ` +
      `-H "Authorization: Bearer $TOKEN" -H "userToken: $USER_TOKEN"`,
  };
}

export function tourVariables(facts: Facts, numbers: DemoNumbers): TourVariables {
  const asset = (num: string) => facts.assets.find((a) => a.assetNum === num);
  const lender = facts.members.find((m) => m.memberGlobalId === facts.lending.memberGlobalId);
  return {
    APP_KEY: facts.app.appKey,
    APP_SECRET: facts.app.appSecret,
    CHANNEL: facts.app.channel,
    ENTERPRISE: facts.enterprise.enterpriseGlobalId,
    LICENSE_ORDER: asset(numbers.lock)?.licenseOrderId ?? '',
    LOCK: numbers.lock,
    LOCK_ID: asset(numbers.lock)?.assetId ?? '',
    EMPLOYEE: lender?.memberGlobalId ?? '',
    SPARE: numbers.cloudCustomers[1],
    LENT_LOCK: numbers.lentLock,
    LEND_ASSET: asset(numbers.certificate)?.assetId ?? '',
  };
}

/** `export NAME=value …`, ready to paste into a shell. */
export function exportLine(tour: TourVariables): string {
  return `export ${Object.entries(tour)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ')}`;
}

/**
 * The runtime example's two runs: online it checks out seats of the lock's Simulator (three seats)
 * with an offline lease; offline, with the server stopped, it verifies that lease.
 */
export function runtimeExample(facts: Facts, lock: string): { online: string; offline: string } {
  const env = [
    `KEYWARD_URL=${facts.baseUrl}`,
    `KEYWARD_APP_KEY=${facts.app.appKey}`,
    `KEYWARD_APP_SECRET=${facts.app.appSecret}`,
    `LOCK=${lock}`,
  ].join(' ');
  return {
    online: `${env} npx tsx examples/runtime/run.ts online`,
    offline: 'npx tsx examples/runtime/run.ts offline',
  };
}
