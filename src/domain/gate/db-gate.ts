import type { Db } from '../../db/client.js';
import { DbGateRepository } from './db-gate.repository.js';
import { currentWindow, type Admission, type GateSettings, type RequestGate } from './gate.js';

export class DbGate implements RequestGate {
  private readonly repository: DbGateRepository;

  constructor(
    db: Db,
    private readonly settings: GateSettings,
  ) {
    this.repository = new DbGateRepository(db);
  }

  async admit(appId: string, nonce: string): Promise<Admission> {
    const expiresAt = new Date(Date.now() + this.settings.nonceTtlSeconds * 1000);
    const { hits, fresh } = await this.repository.record(appId, nonce, currentWindow(), expiresAt);
    if (hits > this.settings.limitPerMinute) return 'limited';
    return fresh ? 'ok' : 'replayed';
  }

  async purge(): Promise<void> {
    await this.repository.purge(currentWindow() - 1);
  }

  async close(): Promise<void> {}
}
