import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { StringEnum } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

const StatusView = Type.Object({
  version: Type.String(),
  database: StringEnum(['embedded', 'postgres'] as const),
  migrations: Type.Object({ applied: Type.Integer(), pending: Type.Array(Type.String()) }),
});

/** `keyward status`: the server's version, its database and the migrations it has applied. */
export function statusRoute(app: App): void {
  app.get(
    '/status',
    { config: { access: ACCESS.adminKey }, schema: { response: { 200: StatusView } } },
    async () => app.services.status.read(),
  );
}
