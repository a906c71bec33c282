import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { Nullable, StringEnum } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const KeyList = Type.Object({
  source: StringEnum(['variable', 'file', 'relay'] as const),
  keys: Type.Array(
    Type.Object({
      kid: Type.String(),
      createdAt: Type.Integer(),
      retiredAt: Nullable(Type.Integer()),
      current: Type.Boolean(),
    }),
  ),
});

/** `keyward keys list`: every published signing key, and which one this server signs with. */
export function listRuntimeKeysRoute(app: App): void {
  app.get(
    '/runtime/keys',
    { config: { access: adminMay('read') }, schema: { response: { 200: KeyList } } },
    async () => app.services.runtimeKeys.list(),
  );
}
