import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import type { PoolGrantClaims } from './pool-grant.js';
import { appendRelayAudit, RELAY_STATE_FILES } from './relay-import.js';
import { readIfThere, writePrivate } from './relay-home.js';
import type { RelayKeyMaterial } from './relay-keys.js';
import type { AppliedGrant, RelayLicensesService } from './relay-licenses.service.js';
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
    const { grant, dir } = this.deps.relay;
    const withdrawn = await this.deps.licenses.withdraw(grant);
    // Read once the grant's products are revoked: no use is given after what the return says,
    // and each live lease counts to its expiry (an offline one runs on until then).
    const used = await this.deps.licenses.usedShares(grant, now, true);
    const written = await this.signed(grant, used, now, 'grant.returned');
    writePrivate(path.join(dir, RELAY_STATE_FILES.returned), `${written.token}\n`);
    return { ...written, withdrawn };
  }

  /**
   * At `relay serve`, before it listens: the grant imported made into the relay's licenses. Where
   * it renews a grant the relay's database serves (`superseded.jwt`, kept by `relay import`), the
   * relay also returns that grant, as `keyward relay return` would: a return file
   * `return-GRANT.jwt` in the relay's directory, for the vendor to free the seats it held and give
   * back what the relay did not use of its shares of usage limits. Its use is read before the
   * products are replaced (no machine is served meanwhile), each live lease to its expiry.
   */
  async applyGrant(): Promise<AppliedGrant & { superseded: (WrittenReturn & { file: string }) | null }> {
    const now = (this.deps.now ?? Date.now)();
    const { grant, dir } = this.deps.relay;
    const supersededFile = path.join(dir, RELAY_STATE_FILES.superseded);
    const text = readIfThere(supersededFile)?.trim();
    const previous =
      text === undefined || text === '' ? undefined : (decodeJwt(text) as unknown as PoolGrantClaims);
    let superseded: (WrittenReturn & { file: string }) | null = null;
    // Only a grant the database serves exactly has a use to say: one replaced before it was ever
    // served, or already replaced (a start that stopped after this), has none here.
    if (previous !== undefined && previous.jti !== grant.jti && (await this.deps.licenses.serves(previous))) {
      const used = await this.deps.licenses.usedShares(previous, now, true);
      const written = await this.signed(previous, used, now, 'grant.superseded');
      const file = path.join(dir, `return-${previous.jti}.jwt`);
      writePrivate(file, `${written.token}\n`);
      superseded = { ...written, withdrawn: 0, file };
    }
    const applied = await this.deps.licenses.apply(grant);
    if (previous !== undefined) fs.rmSync(supersededFile, { force: true });
    return { ...applied, superseded };
  }

  /** A return of `grant` signed by the relay's key, with what it used, audited as `event`. */
  private async signed(
    grant: PoolGrantClaims,
    used: UsedShare[],
    now: number,
    event: string,
  ): Promise<Omit<WrittenReturn, 'withdrawn'>> {
    const { key, dir } = this.deps.relay;
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
    appendRelayAudit(dir, {
      at: new Date(now).toISOString(),
      event,
      grantId: grant.jti,
      returnId,
      ...(used.length === 0 ? {} : { used }),
    });
    return { returnId, grantId: grant.jti, token, code: relayReturnCode(token), used };
  }
}
