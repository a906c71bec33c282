import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { adminMay } from '../access/access.js';

const Rotated = Type.Object({ kid: Type.String(), previousKid: Type.String() });

/** `keyward keys rotate`: a new signing key; the previous one stays published, retired. */
export function rotateRuntimeKeyRoute(app: App): void {
  app.post(
    '/runtime/keys/rotate',
    {
      config: { access: adminMay('keys'), effect: 'whole-platform' },
      schema: { response: { 200: Rotated } },
    },
    async (request) => app.services.runtimeKeys.rotate(operatorRequestOf(request)),
  );
}
