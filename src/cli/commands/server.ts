import type { Command } from 'commander';
import { examples } from '../program.js';

/** `keyward migrate`: the CLI's only command that opens the database itself. */
async function migrate(): Promise<void> {
  const { loadConfig } = await import('../../config.js');
  const { secureDataDir } = await import('../../db/data-dir-modes.js');
  const { openDatabase } = await import('../../db/open.js');
  const { migrateToLatest } = await import('../../db/migrate.js');
  const config = loadConfig();
  secureDataDir(config.dataDir, (message) => console.error(`keyward: ${message}`));
  const database = await openDatabase(config);
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`);
  } finally {
    await database.close();
  }
}

const SERVER_ENVIRONMENT = `
Environment (see the README for all):
  PORT, HOST        where it listens (8080, 127.0.0.1)
  DATABASE_URL      postgres://… to use that PostgreSQL; unset: the embedded database in DATA_DIR
  DATA_DIR          the embedded database and the generated admin key (./data)
  KEYWARD_ADMIN_KEY the admin API's key; unset: generated into DATA_DIR/admin.key
  LOG_FORMAT        pretty (readable, with a start banner) or json (one object a line); unset:
                    pretty on a terminal, json otherwise`;

/** `keyward serve` and `keyward migrate`; their code is loaded on use, so help stays quick. */
export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('run the server (what npm start runs); SIGTERM or SIGINT stops it cleanly')
    .addHelpText('after', SERVER_ENVIRONMENT + examples(['LOG_FORMAT=json PORT=9000 keyward serve']))
    .action(async () => (await import('../../server.js')).serve());
  program
    .command('migrate')
    .description('apply pending migrations to the database and exit (the server also does at start)')
    .addHelpText('after', examples(['DATABASE_URL=postgres://user@db-host:5432/keyward keyward migrate']))
    .action(migrate);
}
