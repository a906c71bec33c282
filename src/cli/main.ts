import { loadConfig } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { secureDataDir } from '../db/data-dir-modes.js';
import { openDatabase } from '../db/open.js';
import { serve } from '../server.js';
import { CliError } from './admin-client.js';
import { printable } from './printable.js';
import { appCommand } from './commands/app.js';
import { auditCommand } from './commands/audit.js';
import { enterpriseCommand } from './commands/enterprise.js';
import { memberCommand } from './commands/member.js';

const USAGE = `keyward <command>
  serve                       run the server (what npm start runs)
  migrate                     apply pending migrations and exit
  app create|approve|list|disable|rotate-secret …
  audit [--subject S] [--limit N] [--json]
  enterprise show ENTERPRISE_GLOBAL_ID [--json]
  enterprise set-member-limit ENTERPRISE_GLOBAL_ID N|none
  member set-password --account ACCOUNT --password PW
  demo [--json]               load a small demo data set into the running server`;

async function migrate(): Promise<void> {
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

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve: () => serve(),
  migrate: () => migrate(),
  app: appCommand,
  audit: auditCommand,
  enterprise: enterpriseCommand,
  member: memberCommand,
  // Loaded on use: only the demo needs the typed client package.
  demo: async (args) => (await import('./commands/demo.js')).demoCommand(args),
};

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (command === undefined) throw new CliError(USAGE);
  await command(args);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // The CLI's own errors show what came from the server already escaped, and keep their lines.
  const message =
    error instanceof CliError
      ? error.message
      : printable(String(error instanceof Error ? error.message : error));
  console.error(`keyward: ${message}`);
  process.exitCode = 1;
});
