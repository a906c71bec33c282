import { loginAddress } from '../members/login-source.js';
import { sha256 } from '../shared/secrets.js';
import type { RequestGate } from './gate.js';

export interface TokenRateSettings {
  /** Token requests per minute from one remote address, whatever client they name. */
  perAddress: number;
  /** Failed token requests per minute naming one client_id from one remote address. */
  failuresPerClientAddress: number;
}

export type TokenAdmission =
  { limited: false } | { limited: true; subject: 'address' | 'client-address'; retryAfterSeconds: number };

/**
 * The token endpoint's rate limits, judged before the client is authenticated: guessing secrets
 * or passwords, and the hashing that answers each guess, is limited per address and per client at
 * each address. Nothing here is counted for a client from everywhere at once: its key is public
 * (activation requests, every lease's `aud`), so such a count would let one address spend every
 * address's budget. Addresses are grouped as logins group them (an IPv6 /64 is one); counted in
 * the gate's store, so every instance shares them.
 */
export class TokenRequestLimits {
  constructor(
    private readonly gate: RequestGate,
    private readonly settings: TokenRateSettings,
  ) {}

  /**
   * Counts the request against its address and looks, without counting, at the failures its
   * client has had from there; `failed` counts one when the request turns out a guess.
   */
  async admit(ip: string, clientId: string | undefined): Promise<TokenAdmission> {
    const address = loginAddress(ip);
    const [[byAddress = 0], [failures = 0]] = await Promise.all([
      this.gate.countRequests([`token-ip:${address}`]),
      clientId === undefined ? [0] : this.gate.peekCounts([failuresKey(clientId, address)]),
    ]);
    const retryAfterSeconds = 60 - Math.floor((Date.now() % 60_000) / 1000);
    if (byAddress > this.settings.perAddress) return { limited: true, subject: 'address', retryAfterSeconds };
    if (failures >= this.settings.failuresPerClientAddress)
      return { limited: true, subject: 'client-address', retryAfterSeconds };
    return { limited: false };
  }

  /** A wrong client secret or password (or account) from `ip` for `clientId`. */
  async failed(ip: string, clientId: string): Promise<void> {
    await this.gate.countRequests([failuresKey(clientId, loginAddress(ip))]);
  }
}

/** Hashed: a client_id is whatever the caller sent, up to the body limit. */
const failuresKey = (clientId: string, address: string) =>
  `token-failures:${sha256(`${clientId}\u0000${address}`)}`;
