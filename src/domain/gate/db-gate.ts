import { isEmbedded, type Db } from '../../db/client.js';
import { sha256 } from '../shared/secrets.js';
import { CallBatcher } from '../shared/call-batcher.js';
import { DbGateRepository, type GateRecord, type GateVisit } from './db-gate.repository.js';
import {
  admissionOf,
  currentWindow,
  randomShard,
  type Admission,
  type CallCheck,
  type CallFacts,
  type GateSettings,
  type RequestGate,
} from './gate.js';

/**
 * Calls one statement carries, and statements the gate runs at once: on PostgreSQL two overlap one
 * statement's commit with the next one's work and leave the rest of the pool to the operations;
 * the embedded database runs one statement at a time anyway, so calls wait for the next batch.
 */
const CALLS_PER_STATEMENT = 200;
const IN_FLIGHT = { postgres: 2, embedded: 1 } as const;

export class DbGate implements RequestGate {
  private readonly repository: DbGateRepository;
  private readonly batcher: CallBatcher<GateVisit, GateRecord>;

  constructor(
    db: Db,
    private readonly settings: GateSettings,
  ) {
    this.repository = new DbGateRepository(db);
    const inSteps = isEmbedded(db);
    this.batcher = new CallBatcher(
      (visits) => {
        const counter = { window: currentWindow(), shard: randomShard() };
        return inSteps
          ? this.repository.checkInSteps(visits, counter, this.expiry())
          : this.repository.check(visits, counter, this.expiry());
      },
      inSteps ? IN_FLIGHT.embedded : IN_FLIGHT.postgres,
      CALLS_PER_STATEMENT,
    );
  }

  private expiry(): Date {
    return new Date(Date.now() + this.settings.nonceTtlSeconds * 1000);
  }

  async admit(appId: string, nonce: string | null): Promise<Admission> {
    const [row] = await this.repository.recordAdmitted(
      [{ appId, nonce }],
      { window: currentWindow(), shard: randomShard() },
      this.expiry(),
    );
    return admissionOf(Number(row?.total_hits ?? 0), row?.fresh === true, this.settings.limitPerMinute);
  }

  /**
   * Tokens, nonce and rate limit of a call, in one statement shared with the calls that arrive
   * while the previous statements run (ADR 0010): one commit for many nonces.
   */
  async check(call: CallCheck): Promise<CallFacts> {
    const record = await this.batcher.submit({
      appTokenHash: sha256(call.appToken),
      userTokenHash: call.userToken === undefined ? null : sha256(call.userToken),
      scope: call.scope,
      nonce: call.nonce,
    });
    return {
      app: record.app,
      admission: record.admitted
        ? admissionOf(
            record.hits,
            record.fresh,
            record.app?.rateLimitPerMinute ?? this.settings.limitPerMinute,
          )
        : undefined,
      user: record.user,
    };
  }

  async countRequests(keys: string[]): Promise<number[]> {
    const totals = await this.repository.countKeys(keys, { window: currentWindow(), shard: randomShard() });
    return keys.map((key) => totals.get(key) ?? 0);
  }

  async peekCounts(keys: string[]): Promise<number[]> {
    const totals = await this.repository.peekKeys(keys, currentWindow());
    return keys.map((key) => totals.get(key) ?? 0);
  }

  async purge(): Promise<void> {
    await this.repository.purge(currentWindow() - 1);
  }

  async close(): Promise<void> {}
}
