import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino, type Logger, type LoggerOptions } from 'pino';
import { ensureAdminKey } from './admin-key.js';
import { buildApp } from './app.js';
import { listenForAdmin, type AdminListener } from './http/admin-listener.js';
import { serializeError, serializeRequest } from './http/log-serializers.js';
import { loadConfig, localUrl, type Config } from './config.js';
import { migrateToLatest } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import type { OpenedRelay } from './domain/relay/relay-import.js';
import { secureDataDir } from './db/data-dir-modes.js';
import { startHousekeeping } from './jobs/housekeeping.js';
import { startOrderWorker } from './jobs/order-worker.js';
import { startScheduledBackups } from './jobs/scheduled-backup.js';
import { SLOW_ATTEMPT_MS } from './domain/webhooks/delivery.service.js';
import { startWebhookWorker } from './jobs/webhook-worker.js';
import { prettyDestination } from './startup/pretty-log.js';
import { silentReport, terminalReport, type StartupReport } from './startup/report.js';
import { VERSION } from './version.js';

/** JSON lines exactly as pino writes them, or the same lines made readable with a start banner. */
function outputFor(config: Config): { logger: Logger; report: StartupReport } {
  const options: LoggerOptions = {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.clienttoken', 'req.headers.usertoken'],
    serializers: { err: serializeError, req: serializeRequest },
  };
  if (config.logFormat === 'json') return { logger: pino(options), report: silentReport };
  const color = process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
  return {
    logger: pino(options, prettyDestination(process.stdout, color)),
    report: terminalReport(process.stdout, VERSION),
  };
}

/**
 * Behind a proxy (TRUST_PROXY), with neither a metrics token nor an admin listener, /metrics is as
 * public as the proxy makes the port: its figures help an attacker size the service.
 */
export function metricsArePublic(config: Config): boolean {
  return (
    config.trustProxy !== false && config.metricsToken === undefined && config.adminListener === undefined
  );
}

/**
 * A relay's settings: the environment's, but always the embedded database in the relay's
 * directory and no shared cache; a relay stands alone in its network (docs/relay.md).
 */
function relayConfig(relay: OpenedRelay): Config {
  return loadConfig({
    ...process.env,
    DATABASE_URL: '',
    REDIS_URL: '',
    DATA_DIR: path.join(relay.dir, 'data'),
  });
}

/**
 * `keyward serve`: open the database, migrate, listen, and close cleanly on SIGTERM/SIGINT. Given
 * an opened relay (`keyward relay serve`), the same server on the relay's embedded database, its
 * leases signed by the relay's key and its grant made into its licenses before it listens.
 */
export async function serve(relay?: OpenedRelay): Promise<void> {
  const config = relay === undefined ? loadConfig() : relayConfig(relay);
  const { logger, report } = outputFor(config);
  secureDataDir(config.dataDir, (message) => logger.warn({ dataDir: config.dataDir }, message));
  report.opening(config);
  const database = await openDatabase(config);
  try {
    report.migrating();
    report.migrated(await migrateToLatest(database.db));
  } catch (error) {
    await database.close();
    throw error;
  }
  const adminKey = ensureAdminKey(config);
  const app = await buildApp({
    config,
    db: database.db,
    adminKey: adminKey.key,
    logger,
    ...(relay === undefined
      ? {}
      : {
          relay: {
            key: relay.key,
            grantToken: relay.token,
            grant: relay.claims,
            vendorKeys: relay.vendorKeys,
            createdAt: relay.identity.createdAt,
            dir: relay.dir,
          },
        }),
  });
  // Before the first lease: the key file made (or read) and its public keys published.
  let runtimeKid: string;
  try {
    // The key turned off with no owner to sign in as would leave nobody able to run the platform.
    if (!config.adminKeyEnabled && !(await app.services.operators.hasActiveOwner())) {
      throw new Error(
        'ADMIN_KEY_ENABLED=0, but no active owner exists: start with the admin key on and add one first ' +
          '(keyward operator add --role owner), then give the owner a token (keyward operator token create)',
      );
    }
    runtimeKid = await app.services.runtimeKeys.prepare();
    if (relay !== undefined) {
      const relayReturn = app.services.relayReturn;
      if (relayReturn === undefined) throw new Error('a relay is served with its return service');
      const { applied, products, superseded } = await relayReturn.applyGrant();
      app.log.info(
        { relayId: relay.identity.relayId, grantId: relay.claims.jti, applied, products: products.length },
        applied ? "relay grant applied to the relay's licenses" : 'relay grant already applied',
      );
      if (superseded !== null) {
        app.log.info(
          { grantId: superseded.grantId, returnId: superseded.returnId, file: superseded.file },
          'the renewed grant returned: carry the file to the vendor (keyward relay import-return FILE)',
        );
      }
    }
  } catch (error) {
    await app.close();
    await database.close();
    throw error;
  }
  app.log.info({ kid: runtimeKid, source: app.services.runtimeKeys.source }, 'runtime signing key ready');
  const stopHousekeeping = startHousekeeping(app.services, app.log);
  const stopBackups = startScheduledBackups(app.services.backup, database.db, config.backup, app.log);
  const orderWorker = startOrderWorker(app.services.orders, app.log);
  const webhookWorker = config.webhooks.worker
    ? startWebhookWorker(app.services.webhookDeliveries, app.log, {
        pollMs: config.webhooks.pollMs,
        slots: config.webhooks.concurrency,
        slowMs: SLOW_ATTEMPT_MS,
      })
    : undefined;
  let adminListener: AdminListener | undefined;
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    stopHousekeeping();
    stopBackups();
    Promise.all([orderWorker.stop(), webhookWorker?.stop()])
      .then(() => adminListener?.close())
      .then(() => app.close())
      .then(() => database.close())
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  if (config.adminListener !== undefined) {
    adminListener = await listenForAdmin(app, config.adminListener, config.connections);
    app.log.info({ url: adminListener.url }, `admin API listening at ${adminListener.url}`);
  }
  if (metricsArePublic(config)) {
    app.log.warn(
      'GET /metrics answers anyone the proxy forwards it from: set METRICS_TOKEN, or ADMIN_PORT to serve it on the admin listener',
    );
  }
  app.log.info({ database: database.kind }, 'keyward is serving');
  report.ready({
    version: VERSION,
    url: localUrl(config.host, (app.server.address() as AddressInfo).port),
    adminUrl: adminListener?.url,
    database:
      config.databaseUrl === undefined
        ? { kind: 'embedded', dataDir: config.dataDir }
        : { kind: 'postgres', databaseUrl: config.databaseUrl },
    adminKey,
  });
}
