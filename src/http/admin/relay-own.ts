import { KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode } from '../../errors/runtime-codes.js';
import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';

/** What a relay's own commands meet on the vendor's server: they run against `keyward relay serve`. */
function notARelay(): never {
  const message = 'this server is not a relay: run this against keyward relay serve (KEYWARD_URL)';
  throw new KeywardError(RuntimeCode.validation, message, { cause: message, httpStatus: 409 });
}

/**
 * A relay's own admin routes (`keyward relay serve`): its usage report for the vendor (`keyward
 * relay report`) and the return of its grant (`keyward relay return`), each signed by the relay's
 * key. Declared on every server, so permissions are the same everywhere; elsewhere they answer 409.
 */
export function relayOwnRoutes(app: App): void {
  app.post('/relay/report', { config: { access: adminMay('read') } }, async () =>
    (app.services.relayReport ?? notARelay()).write(),
  );
  app.post('/relay/return', { config: { access: adminMay('write') } }, async () =>
    (app.services.relayReturn ?? notARelay()).returnGrant(),
  );
}
