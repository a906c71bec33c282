import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';

/**
 * `GET /`: a person who opens the server's address in a browser lands on the console's front page,
 * which offers both sign-ins and the API reference (/docs).
 */
export function rootRedirectRoute(app: App): void {
  app.get(
    '/',
    { config: { access: ACCESS.public }, schema: { hide: true } as object },
    async (_request, reply) => reply.redirect('/console', 302),
  );
}
