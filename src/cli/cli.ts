import type { Command } from 'commander';
import { examples, keywardProgram } from './program.js';
import { registerAppCommands } from './commands/app.js';
import { registerAuditCommand } from './commands/audit.js';
import { registerBackupCommands } from './commands/backup.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerEnterpriseCommands } from './commands/enterprise.js';
import { registerLeasesCommand } from './commands/leases.js';
import { registerLicensesCommands } from './commands/licenses.js';
import { registerKeysCommands } from './commands/keys.js';
import { registerLoginCommands } from './commands/login.js';
import { registerMemberCommands } from './commands/member.js';
import { registerOperatorCommands } from './commands/operator.js';
import { registerRelayCommands } from './commands/relay.js';
import { registerServerCommands } from './commands/server.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTokenCommand } from './commands/token.js';
import { registerUsageCommand } from './commands/usage.js';
import { registerWebhooksCommands } from './commands/webhooks.js';

const AFTER_HELP = `
The admin commands call the running server's admin API:
  KEYWARD_URL        where the server is (default http://127.0.0.1:$PORT)
  KEYWARD_ADMIN_URL  where its admin API is, when on a listener of its own (ADMIN_PORT)
  KEYWARD_ADMIN_KEY  the admin key; unset: a personal token (KEYWARD_TOKEN, or keyward login's),
                     else DATA_DIR/admin.key, which the server writes
${examples(['npm start                 # in one terminal', 'npx keyward demo          # in another', 'npx keyward status'])}`;

function register(program: Command): void {
  registerServerCommands(program);
  registerStatusCommand(program);
  registerDemoCommand(program);
  registerAppCommands(program);
  registerTokenCommand(program);
  registerAuditCommand(program);
  registerEnterpriseCommands(program);
  registerMemberCommands(program);
  registerLeasesCommand(program);
  registerLicensesCommands(program);
  registerUsageCommand(program);
  registerKeysCommands(program);
  registerWebhooksCommands(program);
  registerBackupCommands(program);
  registerOperatorCommands(program);
  registerLoginCommands(program);
  registerRelayCommands(program);
  program.addHelpText('after', AFTER_HELP);
}

/** The whole `keyward` command line; main.ts runs it, tests may run it in-process. */
export function keywardCli(): Command {
  return keywardProgram(register);
}
