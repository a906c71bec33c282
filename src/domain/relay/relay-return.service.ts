import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { appendRelayAudit, RELAY_STATE_FILES } from './relay-import.js';
import { writePrivate } from './relay-home.js';
import type { RelayKeyMaterial } from './relay-keys.js';
import type { RelayLicensesService } from './relay-licenses.service.js';
import { RELAY_REQUEST_ISSUER } from './relay-request.js';
import { signRelayReturn, type UsedShare } from './relay-return.js';
import { relayReturnCode } from './relay-typed.js';

/** What `keyward relay return` writes. */
export interface WrittenReturn {
  returnId: string;
  grantId: string;
  token: string;
  /** The return as a typed code, to read out where not even a file leaves the network. */
  code: string | null;
  /** Products the relay stopped giving seats of. */
  withdrawn: number;
  /** What it used of each share of a usage limit its grant held: the vendor gives back the rest. */
  used: UsedShare[];
}

/**
 * On a relay: gives its grant back before the end. The relay first stops giving the grant's seats
 * (its products revoked through the order service, so check-outs and heartbeats are refused as
 * any revoked license's), then signs the return for the vendor, who frees the seats it held. The
 * relay will not serve that grant again (`return.jwt` names it); a new grant serves again.
 */
export class RelayReturnService {
  constructor(
    private readonly deps: { relay: RelayKeyMaterial; licenses: RelayLicensesService; now?: () => number },
  ) {}

  async returnGrant(): Promise<WrittenReturn> {
    const now = (this.deps.now ?? Date.now)();
    const { grant, key, dir } = this.deps.relay;
    const withdrawn = await this.deps.licenses.withdraw(grant);
    // Read once the grant's products are revoked: no use is given after what the return says.
    const used = await this.deps.licenses.usedShares(grant, now);
    const returnId = randomUUID();
    const token = await signRelayReturn(
      {
        iss: RELAY_REQUEST_ISSUER,
        sub: grant.sub,
        jti: returnId,
        iat: Math.floor(now / 1000),
        grant: grant.jti,
        ...(used.length === 0 ? {} : { used }),
      },
      key,
    );
    writePrivate(path.join(dir, RELAY_STATE_FILES.returned), `${token}\n`);
    appendRelayAudit(dir, {
      at: new Date(now).toISOString(),
      event: 'grant.returned',
      grantId: grant.jti,
      returnId,
      ...(used.length === 0 ? {} : { used }),
    });
    return { returnId, grantId: grant.jti, token, code: relayReturnCode(token), withdrawn, used };
  }
}
