import type { Db } from '../../db/client.js';
import { MembersProvisioningRepository, type NewMember } from '../members/members-provisioning.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { sha256 } from '../shared/secrets.js';
import { newEnterpriseCode } from './enterprise-code.js';
import { EnterprisesRepository, type EnterpriseRecord } from './enterprises.repository.js';

// Collisions are rare (36^6 codes); twenty in a row means something else is wrong.
const CODE_ATTEMPTS = 20;

const MEMBER_USER_NAME = /^[A-Za-z0-9]{2,30}$/;

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
          userName: 'admin',
          account: `admin@${enterprise.code}`,
          name: 'Administrator',
          identity: 'admin',
        },
      ]);
      return enterprise;
    }
  }
  throw new Error(`no free enterprise code after ${CODE_ATTEMPTS} attempts`);
}

/**
 * A cloud account's member is named after its asset number, so the administrator can tell who
 * holds which account; an asset number that is not a valid user name (letters and digits, 2–30)
 * gets a stable name derived from the asset id instead.
 */
function userNameFor(asset: { id: string; assetNum: string }): string {
  return MEMBER_USER_NAME.test(asset.assetNum) ? asset.assetNum : `ca${sha256(asset.id).slice(0, 16)}`;
}

/** One ordinary member per unassigned active cloud account of the customer, the account assigned to it. */
export async function provisionCloudAccountMembers(
  trx: Db,
  enterprise: EnterpriseRecord,
  customerId: string,
): Promise<void> {
  const members = new MembersProvisioningRepository(trx);
  const assets = await members.unassignedCloudAccountsOf(customerId);
  const planned: Array<NewMember & { assetId: string }> = assets.map((asset) => {
    const userName = userNameFor(asset);
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
  await members.assign(
    planned.flatMap((p) => {
      const memberId = memberIdOf.get(p.globalId);
      return memberId === undefined ? [] : [{ assetId: p.assetId, memberId }];
    }),
  );
}
