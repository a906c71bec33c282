import type { DemoNumbers } from './data-set.js';
import type { DemoFacts } from './load-demo.js';

/** Shell lines to paste: the two logins set $TOKEN and $USER_TOKEN, the calls use them. */
export interface CurlCommands {
  token: string;
  userToken: string;
  order: string;
  member: string;
}

/** The variables the README's tour uses, named as it names them. */
export interface TourVariables {
  APP_KEY: string;
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

type Facts = Omit<DemoFacts, 'curl' | 'tour'>;

// No jq needed: the token endpoint's answer is one line of JSON and tokens are base64url.
const ACCESS_TOKEN = `sed -E 's/.*"access_token":"([^"]+)".*/\\1/'`;
const NONCE = 'g_nonce=$(openssl rand -hex 12)';

export function curlCommands(facts: Facts): CurlCommands {
  const { baseUrl, app, admin, enterprise } = facts;
  const login = `curl -s -u '${app.appKey}:${app.appSecret}'`;
  return {
    token: `TOKEN=$(${login} -d grant_type=client_credentials ${baseUrl}/oauth2/token | ${ACCESS_TOKEN})`,
    userToken:
      `USER_TOKEN=$(${login} -d grant_type=password -d username='${admin.account}' ` +
      `-d password='${admin.password}' ${baseUrl}/oauth2/token | ${ACCESS_TOKEN})`,
    order:
      `curl -s "${baseUrl}/order/api/order/v1/asset/${enterprise.enterpriseGlobalId}/list?${NONCE}" ` +
      `-H "Authorization: Bearer $TOKEN"`,
    member:
      `curl -s "${baseUrl}/me/api/v1/enterprise/${enterprise.enterpriseGlobalId}/asset/assetNums?${NONCE}" ` +
      `-H "Authorization: Bearer $TOKEN" -H "userToken: $USER_TOKEN"`,
  };
}

export function tourVariables(facts: Facts, numbers: DemoNumbers): TourVariables {
  const asset = (num: string) => facts.assets.find((a) => a.assetNum === num);
  const lender = facts.members.find((m) => m.memberGlobalId === facts.lending.memberGlobalId);
  return {
    APP_KEY: facts.app.appKey,
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
