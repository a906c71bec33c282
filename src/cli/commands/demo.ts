import type { Command } from 'commander';
import { examples } from '../program.js';

/** `keyward demo`: registered here, its code loaded on use (only it needs the typed client package). */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'load a small demo data set into the running server through its API, and print an app, ' +
        'an enterprise, an administrator login and requests to try',
    )
    .option('--json', 'print the same facts as one JSON object')
    .addHelpText('after', examples(['npm start            # in another terminal', 'keyward demo']))
    .action(async (options: { json?: boolean }) =>
      (await import('../demo/print-demo.js')).printDemo(options.json === true),
    );
}
