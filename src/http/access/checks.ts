import type { Config } from '../../config.js';
import type { Services } from '../../services.js';
import { consoleChecks } from '../console/gate.js';
import { adminGuard } from '../guards/admin-key-guard.js';
import { appGuard } from '../guards/app-guard.js';
import { memberGuard } from '../guards/member-guard.js';
import { metricsGuard } from '../guards/metrics-guard.js';
import { runtimeGuard } from '../guards/runtime-guard.js';
import type { Checks } from './enforce.js';

/** The check of every kind of caller a route may declare. */
export function accessChecks(services: Services, config: Config, adminKey: string): Checks {
  return {
    public: async () => undefined,
    app: appGuard(services),
    runtime: runtimeGuard(services),
    member: memberGuard(services),
    admin: adminGuard(services, adminKey, config.adminKeyEnabled),
    metrics: metricsGuard(config.metricsToken),
    ...consoleChecks(services),
  };
}
