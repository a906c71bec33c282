import type { Db } from '../../db/client.js';
import { MembersProvisioningRepository, type NewMember } from '../members/members-provisioning.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { sha256 } from '../shared/secrets.js';
import { newEnterpriseCode } from './enterprise-code.js';
import { EnterprisesRepository, type EnterpriseRecord } from './enterprises.repository.js';

// Collisions are rare (36^6 codes); twenty in a row means something else is wrong.
const CODE_ATTEMPTS = 20;

const MEMBER_USER_NAME = /^[A-Za-z0-9]{2,30}$/;

const ADMIN_USER_NAME = 'admin';

/**
 * Creates an enterprise under a fresh random code together with its administrator
 * `admin@<code>`, who has no usable password until an operator sets one. Runs inside the
 * caller's transaction.
 */
export async function createEnterpriseWithAdmin(trx: Db, name: string): Promise<EnterpriseRecord> {
  const enterprises = new EnterprisesRepository(trx);
  for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt += 1) {
    const enterprise = await enterprises.insertIfCodeFree({
      globalId: newGlobalId(),
      name,
      code: newEnterpriseCode(),
    });
    if (enterprise) {
      await new MembersProvisioningRepository(trx).insertMany(enterprise.id, [
        {
          globalId: newGlobalId(),
          userName: ADMIN_USER_NAME,
          account: `${ADMIN_USER_NAME}@${enterprise.code}`,
          name: 'Administrator',
          identity: 'admin',
        },
      ]);
      return enterprise;
    }
  }
  throw new Error(`no free enterprise code after ${CODE_ATTEMPTS} attempts`);
}

/** `ca` and 16 hex digits of a hash of the asset id (and of the attempt after the first): stable. */
function derivedUserName(assetId: string, attempt: number): string {
  return `ca${sha256(attempt === 0 ? assetId : `${assetId}:${attempt}`).slice(0, 16)}`;
}

/**
 * A cloud account's member is named after its asset number, so the administrator can tell who
 * holds which account. Accounts are unique regardless of letter case, so a number that is no
 * valid user name (letters and digits, 2–30), that is `admin` in any case, or that differs from
 * an earlier one only in case gets a name derived from its asset id instead; numbers keep their
 * own names first, and a derived name that meets any name already given is derived again.
 */
function userNamesFor(assets: Array<{ id: string; assetNum: string }>): Map<string, string> {
  const taken = new Set([ADMIN_USER_NAME]);
  const names = new Map<string, string>();
  for (const asset of assets) {
    const own = asset.assetNum.toLowerCase();
    if (MEMBER_USER_NAME.test(asset.assetNum) && !taken.has(own)) {
      taken.add(own);
      names.set(asset.id, asset.assetNum);
    }
  }
  for (const asset of assets) {
    if (names.has(asset.id)) continue;
    let attempt = 0;
    while (taken.has(derivedUserName(asset.id, attempt))) attempt += 1;
    const name = derivedUserName(asset.id, attempt);
    taken.add(name);
    names.set(asset.id, name);
  }
  return names;
}

/** A member order op 2 made for a cloud account, and the account it holds. */
export interface CloudAccountMember {
  globalId: string;
  account: string;
  asset: { id: string; assetNum: string };
}

/**
 * One ordinary member per unassigned active cloud account of the customer, the account assigned to
 * it; answers them.
 */
export async function provisionCloudAccountMembers(
  trx: Db,
  enterprise: EnterpriseRecord,
  customerId: string,
): Promise<CloudAccountMember[]> {
  const members = new MembersProvisioningRepository(trx);
  const assets = await members.unassignedCloudAccountsOf(customerId);
  // The enterprise is new: its administrator is the only member the names must not meet.
  const userNames = userNamesFor(assets);
  const planned: Array<NewMember & { assetId: string }> = assets.map((asset) => {
    const userName = userNames.get(asset.id) as string;
    return {
      assetId: asset.id,
      globalId: newGlobalId(),
      userName,
      account: `${userName}@${enterprise.code}`,
      name: userName,
      identity: 'member',
    };
  });
  const inserted = await members.insertMany(enterprise.id, planned);
  const memberIdOf = new Map(inserted.map((m) => [m.globalId, m.id]));
  const held = planned.filter((p) => memberIdOf.has(p.globalId));
  await members.assign(
    held.map((p) => ({ assetId: p.assetId, memberId: memberIdOf.get(p.globalId) as number })),
  );
  const numberOf = new Map(assets.map((a) => [a.id, a.assetNum]));
  return held.map((p) => ({
    globalId: p.globalId,
    account: p.account,
    asset: { id: p.assetId, assetNum: numberOf.get(p.assetId) as string },
  }));
}
