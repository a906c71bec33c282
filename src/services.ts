import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { AppsService } from './domain/apps/apps.service.js';
import { AssetNumbersService } from './domain/asset-numbers/asset-numbers.service.js';
import { AuditRepository } from './domain/audit/audit.repository.js';
import { DbGate } from './domain/gate/db-gate.js';
import type { RequestGate } from './domain/gate/gate.js';
import { RedisGate } from './domain/gate/redis-gate.js';
import { LoginService } from './domain/members/login.service.js';
import { TokensService } from './domain/tokens/tokens.service.js';

/** Every service the surfaces call, built once per process around one database handle. */
export interface Services {
  apps: AppsService;
  tokens: TokensService;
  login: LoginService;
  gate: RequestGate;
  audit: AuditRepository;
  assetNumbers: AssetNumbersService;
}

export function createServices(db: Db, config: Config): Services {
  const gateSettings = {
    nonceTtlSeconds: config.tokenTtlSeconds,
    limitPerMinute: config.rateLimitPerMinute,
  };
  return {
    apps: new AppsService(db),
    tokens: new TokensService(db, config.tokenTtlSeconds),
    login: new LoginService(db),
    gate:
      config.redisUrl === undefined
        ? new DbGate(db, gateSettings)
        : new RedisGate(config.redisUrl, gateSettings),
    audit: new AuditRepository(db),
    assetNumbers: new AssetNumbersService(db, config.region),
  };
}
