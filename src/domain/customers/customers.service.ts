import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { customerUpdated } from '../enterprises/customer-audit.js';
import { optionalText } from '../enterprises/customer-input.js';
import { EnterprisesRepository } from '../enterprises/enterprises.repository.js';
import { CustomersRepository } from './customers.repository.js';

export interface CustomerUpdate {
  crmCustomerId: string;
  customerName?: string | null;
  branchName?: string | null;
  address?: string | null;
}

export class CustomersService {
  constructor(private readonly db: Db) {}

  /**
   * Order op 4: fields given replace the stored ones, the others stay. The enterprise carries its
   * default customer's name, so renaming that customer renames the enterprise in the same
   * transaction. A customer of a channel the app does not hold is answered as unknown. Audited
   * with the names of the fields replaced, not their values.
   */
  async updateByCrm(input: CustomerUpdate, channels: string[], actor: AuditActor): Promise<void> {
    const name = optionalText(input.customerName);
    const branchName = optionalText(input.branchName);
    const address = optionalText(input.address);
    await this.db.transaction().execute(async (trx) => {
      const customers = new CustomersRepository(trx);
      const customer = await customers.lockVisibleByCrm(input.crmCustomerId, channels);
      if (!customer) {
        throw new KeywardError(OrderCode.validation, 'crmCustomerId: no customer has this CRM id');
      }
      await customers.update(customer.id, {
        ...(name === undefined ? {} : { name }),
        ...(branchName === undefined ? {} : { branchName }),
        ...(address === undefined ? {} : { address }),
      });
      let enterpriseRenamed = false;
      if (name !== undefined && customer.isDefault && customer.enterpriseId !== null) {
        await new EnterprisesRepository(trx).rename(customer.enterpriseId, name);
        enterpriseRenamed = true;
      }
      const fields = Object.entries({ customerName: name, branchName, address })
        .filter(([, value]) => value !== undefined)
        .map(([field]) => field);
      await new AuditRepository(trx).record(actor, [
        customerUpdated({ ...customer, crmCustomerId: input.crmCustomerId }, fields, enterpriseRenamed),
      ]);
    });
  }
}
