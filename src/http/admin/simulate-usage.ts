import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { IntLike } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Body = Type.Object({
  enterprise: Type.String({ minLength: 1, maxLength: 255, description: "the enterprise's global id" }),
  app: Type.String({ minLength: 1, maxLength: 100, description: 'the app the usage is recorded under' }),
  days: Type.Optional(IntLike({ minimum: 1, maximum: 62 })),
});

/**
 * `keyward demo`: a month of simulated usage for the demo's enterprise, so its Usage pages show
 * curves, refusals and a product at capacity on first look. Refused (400) for an enterprise that
 * has usage history: it cannot be turned on a real customer's numbers.
 */
export function simulateUsageRoute(app: App): void {
  app.post(
    '/usage/simulate',
    { config: { access: adminMay('write') }, schema: { body: Body } },
    async (request) =>
      app.services.usage.simulate({
        enterprise: request.body.enterprise,
        app: request.body.app,
        days: request.body.days ?? 30,
      }),
  );
}
