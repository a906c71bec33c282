import type { Db } from '../../db/client.js';
import { CommonCode, commonMessages } from '../../errors/common-codes.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { CRM_ID_UNAVAILABLE } from '../customers/crm-id.js';
import { CustomersRepository, type CustomerRecord } from '../customers/customers.repository.js';
import {
  MembersProvisioningRepository,
  type ProvisionedMember,
} from '../members/members-provisioning.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { customerBound, customerCreated } from './customer-audit.js';
import { CustomerQueryBatcher } from './customer-query-batcher.js';
import {
  EnterpriseDirectoryRepository,
  type DirectoryEnterprise,
} from './enterprise-directory.repository.js';
import { optionalMobile, optionalText, requiredText } from './customer-input.js';
import { createEnterpriseWithAdmin, provisionCloudAccountMembers } from './enterprise-provisioning.js';
import {
  EnterprisesRepository,
  type EnterpriseCustomer,
  type EnterpriseRecord,
  type EnterpriseView,
} from './enterprises.repository.js';

export interface BindInput {
  channelCode: string;
  channelCustomerId: string;
  customerName?: string | null;
  branchName?: string | null;
  enterpriseName: string;
  passwordMobile?: string | null;
}

export interface CreateInput {
  crmCustomerId: string;
  customerName: string;
  branchName?: string | null;
  address?: string | null;
}

/** The spec's "Enterprise account creation result" (order op 2). */
export interface EnterpriseCreation {
  enterpriseGlobalId: string;
  defaultType: boolean;
  members: ProvisionedMember[];
}

// The foreign key keeps a customer's enterprise in place; reaching this is a fault, answered 500.
function missingEnterprise(customer: { id: string; enterpriseId: number | null }): never {
  throw new Error(`customer ${customer.id} points at missing enterprise ${String(customer.enterpriseId)}`);
}

/** Op 1's answer: its customer is found by its channel key, so it always has one. */
export type BoundChannelCustomer = EnterpriseCustomer & { channelCustomerId: string };

function asChannelCustomer(customer: CustomerRecord, enterprise: EnterpriseRecord): BoundChannelCustomer {
  if (customer.channelCode === null || customer.channelCustomerId === null) {
    throw new Error(`customer ${customer.id} has no channel key`);
  }
  return {
    customerId: customer.id,
    channelCode: customer.channelCode,
    channelCustomerId: customer.channelCustomerId,
    enterpriseGlobalId: enterprise.globalId,
    enterpriseName: enterprise.name,
    isDefault: customer.isDefault,
  };
}

/**
 * Order ops 1–3: enterprise master accounts and the channel customers bound to them. Each write
 * claims the customer's unique key first (insert-if-absent, then a row lock), so concurrent calls
 * with the same key queue behind the first and find what it created.
 */
export class EnterprisesService {
  private readonly customerQueries: CustomerQueryBatcher;

  constructor(private readonly db: Db) {
    this.customerQueries = new CustomerQueryBatcher(db);
  }

  /**
   * Op 1. The caller has checked that `channelCode` is one of the app's channels. Binding is
   * audited; finding the customer bound already changes nothing and is not.
   */
  async bind(input: BindInput, actor: AuditActor): Promise<BoundChannelCustomer> {
    const enterpriseName = requiredText('enterpriseName', input.enterpriseName);
    const name = optionalText(input.customerName);
    const branchName = optionalText(input.branchName);
    const securityMobile = optionalMobile('passwordMobile', input.passwordMobile);

    return this.db.transaction().execute(async (trx) => {
      const customers = new CustomersRepository(trx);
      const enterprises = new EnterprisesRepository(trx);
      const found = await customers.lockByChannel(input.channelCode, input.channelCustomerId);
      const claimed =
        found ??
        (await customers.insertIfAbsent({
          id: newGlobalId(),
          channelCode: input.channelCode,
          channelCustomerId: input.channelCustomerId,
          crmCustomerId: null,
          name: name ?? null,
          customerType: 'company',
          branchCode: null,
          branchName: branchName ?? null,
          address: null,
          securityMobile: securityMobile ?? null,
          enterpriseId: null,
          isDefault: false,
          gongxin: false,
        }));
      const existing =
        claimed ??
        // A concurrent call inserted it first: wait for it and read what it made.
        (await customers.lockByChannel(input.channelCode, input.channelCustomerId));
      if (!existing) throw new Error('customer vanished while binding');

      if (existing.enterpriseId !== null) {
        const enterprise = (await enterprises.findById(existing.enterpriseId)) ?? missingEnterprise(existing);
        return asChannelCustomer(existing, enterprise);
      }
      const enterprise = await createEnterpriseWithAdmin(trx, enterpriseName);
      const bound = await customers.bindAsDefault(existing.id, enterprise.id, {
        ...(name === undefined ? {} : { name }),
        ...(branchName === undefined ? {} : { branchName }),
        ...(securityMobile === undefined ? {} : { securityMobile }),
      });
      const view = asChannelCustomer(bound, enterprise);
      await new AuditRepository(trx).record(actor, [
        customerBound(
          {
            id: bound.id,
            channelCode: view.channelCode,
            channelCustomerId: view.channelCustomerId,
            created: found === undefined && claimed !== undefined,
          },
          enterprise,
        ),
      ]);
      return view;
    });
  }

  /**
   * Op 2. The customer belongs to the app's first channel (the body names none); a CRM id already
   * held by a channel the app does not have cannot be taken over. Creating is audited, with the
   * members it makes; finding the enterprise made already changes nothing and is not.
   */
  async create(input: CreateInput, channels: string[], actor: AuditActor): Promise<EnterpriseCreation> {
    const channelCode = channels[0];
    if (channelCode === undefined) {
      throw new KeywardError(CommonCode.appTokenInvalid, commonMessages[CommonCode.appTokenInvalid], {
        cause: 'this application holds no channel to create customers in',
      });
    }
    const name = requiredText('customerName', input.customerName);
    const branchName = optionalText(input.branchName);
    const address = optionalText(input.address);

    return this.db.transaction().execute(async (trx) => {
      const customers = new CustomersRepository(trx);
      const members = new MembersProvisioningRepository(trx);
      const found = await customers.lockVisibleByCrm(input.crmCustomerId, channels);
      const claimed =
        found ??
        (await customers.insertIfAbsent({
          id: newGlobalId(),
          channelCode,
          channelCustomerId: null,
          crmCustomerId: input.crmCustomerId,
          name,
          customerType: 'company',
          branchCode: null,
          branchName: branchName ?? null,
          address: address ?? null,
          securityMobile: null,
          enterpriseId: null,
          isDefault: false,
          gongxin: false,
        }));
      const existing = claimed ?? (await customers.lockVisibleByCrm(input.crmCustomerId, channels));
      if (!existing) {
        throw new KeywardError(OrderCode.validation, `crmCustomerId: ${CRM_ID_UNAVAILABLE}`);
      }

      if (existing.enterpriseId !== null) {
        const enterprise =
          (await new EnterprisesRepository(trx).findById(existing.enterpriseId)) ??
          missingEnterprise(existing);
        return {
          enterpriseGlobalId: enterprise.globalId,
          defaultType: existing.isDefault,
          members: await members.listForCustomer(enterprise.id, existing.id),
        };
      }
      // The enterprise is named after its default customer, as op 4 keeps it.
      const enterprise = await createEnterpriseWithAdmin(trx, name);
      await customers.bindAsDefault(existing.id, enterprise.id, {
        name,
        ...(branchName === undefined ? {} : { branchName }),
        ...(address === undefined ? {} : { address }),
        gongxin: true,
      });
      const provisioned = await provisionCloudAccountMembers(trx, enterprise, existing.id);
      const customer = {
        id: existing.id,
        crmCustomerId: input.crmCustomerId,
        created: found === undefined && claimed !== undefined,
      };
      await new AuditRepository(trx).record(actor, customerCreated(customer, enterprise, provisioned));
      return {
        enterpriseGlobalId: enterprise.globalId,
        defaultType: true,
        members: await members.listForCustomer(enterprise.id, existing.id),
      };
    });
  }

  /**
   * Op 3. The caller has checked `channelCode`; `defaultOnly` is `defaultCustomer=Y`. The read is
   * shared with the op 3 calls that arrive with this one (CustomerQueryBatcher): one statement and
   * one round trip for all of them, each answered with its own rows.
   */
  async query(
    input: { channelCode: string; channelCustomerId: string; defaultOnly: boolean },
    channels: string[],
  ): Promise<EnterpriseCustomer[]> {
    // An app without channels may see no customer: answered here, it takes no place in a batch.
    if (channels.length === 0) return [];
    return this.customerQueries.query({ ...input, channels });
  }

  /** `keyward enterprise show`: undefined for an unknown id. */
  async show(enterpriseGlobalId: string): Promise<EnterpriseView | undefined> {
    return new EnterprisesRepository(this.db).findView(enterpriseGlobalId);
  }

  /** The operator's directory: a page of enterprises with their channel customers. */
  async directory(query: {
    keyword: string;
    page: number;
    pageSize: number;
  }): Promise<{ total: number; list: DirectoryEnterprise[] }> {
    return new EnterpriseDirectoryRepository(this.db).search({
      keyword: query.keyword,
      offset: (query.page - 1) * query.pageSize,
      limit: query.pageSize,
    });
  }

  /** One enterprise of the directory, with every customer; undefined for an unknown id. */
  async directoryEntry(enterpriseGlobalId: string): Promise<DirectoryEnterprise | undefined> {
    return new EnterpriseDirectoryRepository(this.db).find(enterpriseGlobalId);
  }
}
