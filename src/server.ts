import { resolveAdminKey } from './admin-key.js';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { listenForAdmin, type AdminListener } from './http/admin-listener.js';
import { serializeError, serializeRequest } from './http/log-serializers.js';
import { loadConfig } from './config.js';
import { migrateToLatest } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { secureDataDir } from './db/data-dir-modes.js';
import { startHousekeeping } from './jobs/housekeeping.js';
import { startOrderWorker } from './jobs/order-worker.js';

/** `keyward serve`: open the database, migrate, listen, and close cleanly on SIGTERM/SIGINT. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = pino({
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.clienttoken', 'req.headers.usertoken'],
    serializers: { err: serializeError, req: serializeRequest },
  });
  secureDataDir(config.dataDir, (message) => logger.warn({ dataDir: config.dataDir }, message));
  const database = await openDatabase(config);
  try {
    await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  const app = await buildApp({
    config,
    db: database.db,
    adminKey: resolveAdminKey(config),
    logger,
  });
  const stopHousekeeping = startHousekeeping(app.services, app.log);
  const orderWorker = startOrderWorker(app.services.orders, app.log);
  let adminListener: AdminListener | undefined;
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    stopHousekeeping();
    orderWorker
      .stop()
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
    adminListener = await listenForAdmin(app, config.adminListener);
    app.log.info({ url: adminListener.url }, `admin API listening at ${adminListener.url}`);
  }
  app.log.info({ database: database.kind }, 'keyward is serving');
}
