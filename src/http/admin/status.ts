import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { StringEnum } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const StatusView = Type.Object({
  version: Type.String(),
  database: StringEnum(['embedded', 'postgres'] as const),
  migrations: Type.Object({ applied: Type.Integer(), pending: Type.Array(Type.String()) }),
  signIn: Type.Object({ owners: Type.Integer(), adminKeyEnabled: Type.Boolean() }),
});

/** `keyward status`: the server's version, its database and the migrations it has applied. */
export function statusRoute(app: App): void {
  app.get(
    '/status',
    { config: { access: adminMay('status') }, schema: { response: { 200: StatusView } } },
    async () => app.services.status.read(),
  );
}
