import type { App } from '../../app-type.js';
import { ssoCallbackRoute } from './sso-callback.js';
import { ssoStartRoute } from './sso-start.js';

/** Operators' single sign-on (OpenID Connect): answers "not set up" until OIDC_* is configured. */
export function ssoRoutes(app: App): void {
  ssoStartRoute(app);
  ssoCallbackRoute(app);
}
