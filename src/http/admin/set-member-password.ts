import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { AdminNotFoundError } from './index.js';
import { adminMay } from '../access/access.js';

// The password's rules (8–16 characters) are member op 3's, checked by the service.
const Body = Type.Object({
  account: Type.String({ minLength: 1, maxLength: 100 }),
  password: Type.String(),
});

const Result = Type.Object({ account: Type.String(), memberGlobalId: Type.String() });

/** `keyward member set-password`: how an administrator gets its first password. */
export function setMemberPasswordRoute(app: App): void {
  app.post(
    '/members/password',
    { config: { access: adminMay('write') }, schema: { body: Body, response: { 200: Result } } },
    async (request) => {
      const done = await app.services.memberAdmin.setPassword(
        request.body.account,
        request.body.password,
        operatorRequestOf(request),
      );
      if (!done) throw new AdminNotFoundError(`no member with account ${request.body.account}`);
      return done;
    },
  );
}
