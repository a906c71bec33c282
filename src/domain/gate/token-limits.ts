import { sha256 } from '../shared/secrets.js';
import type { RequestGate } from './gate.js';

export interface TokenRateSettings {
  /** Token requests per minute naming one client_id, whatever their address. */
  perClient: number;
  /** Token requests per minute from one remote address, whatever client they name. */
  perAddress: number;
}

export type TokenAdmission =
  { limited: false } | { limited: true; subject: 'client' | 'address'; retryAfterSeconds: number };

/**
 * The token endpoint's rate limits, counted before the client is authenticated: guessing secrets
 * or passwords, and the hashing that answers each guess, is limited per client and per address.
 * Counted in the gate's store, so every instance shares them.
 */
export class TokenRequestLimits {
  constructor(
    private readonly gate: RequestGate,
    private readonly settings: TokenRateSettings,
  ) {}

  async admit(address: string, clientId: string | undefined): Promise<TokenAdmission> {
    // Hashed: a client_id is whatever the caller sent, up to the body limit.
    const keys = [
      `token-ip:${address}`,
      ...(clientId === undefined ? [] : [`token-client:${sha256(clientId)}`]),
    ];
    const [byAddress = 0, byClient = 0] = await this.gate.countRequests(keys);
    const retryAfterSeconds = 60 - Math.floor((Date.now() % 60_000) / 1000);
    if (byAddress > this.settings.perAddress) return { limited: true, subject: 'address', retryAfterSeconds };
    if (byClient > this.settings.perClient) return { limited: true, subject: 'client', retryAfterSeconds };
    return { limited: false };
  }
}
