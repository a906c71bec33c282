import { isEmbedded, type Db } from '../../db/client.js';
import { CallBatcher } from '../shared/call-batcher.js';
import {
  EnterprisesRepository,
  type ChannelCustomerQuery,
  type EnterpriseCustomer,
} from './enterprises.repository.js';

/**
 * Order op 3 calls that arrive together share one statement, as the gate's checks and heartbeats
 * do (ADR 0010): the read is tiny, so a statement and a round trip of its own per call cost the
 * server more than the work (bench/PROFILES.md). The bound keeps one statement's arrays, and the
 * wait of the calls in it, small; two statements may run at once on PostgreSQL, one on the
 * embedded database, which runs one statement at a time anyway. A failed statement fails each of
 * its calls with its error (CallBatcher); the next calls get a statement of their own.
 */
const CALLS_PER_STATEMENT = 200;
const IN_FLIGHT = { postgres: 2, embedded: 1 } as const;

export class CustomerQueryBatcher {
  private readonly batcher: CallBatcher<ChannelCustomerQuery, EnterpriseCustomer[]>;

  constructor(db: Db) {
    const repository = new EnterprisesRepository(db);
    this.batcher = new CallBatcher(
      (queries) => repository.listCustomersOfChannelCustomers(queries),
      isEmbedded(db) ? IN_FLIGHT.embedded : IN_FLIGHT.postgres,
      CALLS_PER_STATEMENT,
    );
  }

  /** One call's answer, read in the statement of the calls that arrived with it. */
  query(query: ChannelCustomerQuery): Promise<EnterpriseCustomer[]> {
    return this.batcher.submit(query);
  }
}
