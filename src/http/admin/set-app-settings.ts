import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { adminMay } from '../access/access.js';
import { MAX_APP_RATE_LIMIT } from '../../domain/apps/apps.service.js';

const Params = Type.Object({ appKey: Type.String({ minLength: 1, maxLength: 100 }) });
const Body = Type.Object(
  {
    offlineEarlyReturn: Type.Optional(
      Type.Boolean({
        description: "a checked-in offline lease frees its seat at once (trusts the app's software)",
      }),
    ),
    restrictToChannels: Type.Optional(
      Type.Boolean({ description: "member logins only for the enterprises of the app's channels" }),
    ),
    rateLimitPerMinute: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: MAX_APP_RATE_LIMIT }), Type.Null()], {
        description: "the app's calls a minute, all instances together; null: RATE_LIMIT_PER_MINUTE",
      }),
    ),
    force: Type.Optional(Type.Boolean({ description: 'needed to change keyward-console' })),
  },
  // A misspelt setting is refused rather than left unchanged without a word.
  { additionalProperties: false },
);

/**
 * `keyward app set KEY [--[no-]offline-early-return] [--[no-]restrict-to-channels] [--rate-limit N|default] [--force]`: the
 * app's settings; those left out stay as they are.
 */
export function setAppSettingsRoute(app: App): void {
  app.post(
    '/apps/:appKey/settings',
    { config: { access: adminMay('write') }, schema: { params: Params, body: Body } },
    async (request) => {
      const { offlineEarlyReturn, restrictToChannels, rateLimitPerMinute, force } = request.body;
      return app.services.apps.setSettings(
        request.params.appKey,
        {
          ...(offlineEarlyReturn === undefined ? {} : { offlineEarlyReturn }),
          ...(restrictToChannels === undefined ? {} : { restrictToChannels }),
          ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }),
        },
        operatorRequestOf(request),
        { force: force === true },
      );
    },
  );
}
