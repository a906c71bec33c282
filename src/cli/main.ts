import { CommanderError } from 'commander';
import { CliError } from './admin-client.js';
import { keywardCli } from './cli.js';
import { printable } from './printable.js';
import { helpAsOption } from './program.js';

keywardCli()
  .parseAsync(helpAsOption(process.argv.slice(2)), { from: 'user' })
  .catch((error: unknown) => {
    // Commander has already printed its help or its error; only its exit code is left to set.
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    // The CLI's own errors show what came from the server already escaped, and keep their lines.
    const message =
      error instanceof CliError
        ? error.message
        : printable(String(error instanceof Error ? error.message : error));
    console.error(`keyward: ${message}`);
    process.exitCode = 1;
  });
