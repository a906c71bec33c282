import { Command } from 'commander';
import { VERSION } from '../version.js';
import { printable } from './printable.js';

/** An "Examples:" section for a command's help, one command line each. */
export function examples(lines: string[]): string {
  return ['', 'Examples:', ...lines.map((line) => `  ${line}`)].join('\n');
}

/** Every command below `command`, at any depth. */
function descendants(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...descendants(child)]);
}

/**
 * The `keyward` command with the behaviour every subcommand shares: help on stdout with exit 0,
 * mistakes named on stderr (`keyward: …`, escaped) with the closest command or option suggested and
 * exit 1, and no process.exit of commander's own (main.ts sets the exit code, so output is flushed).
 * Subcommands made with `.command()` inherit these settings; `register` adds them.
 */
export function keywardProgram(register: (program: Command) => void): Command {
  const program = new Command('keyward')
    .description('Keyward, a self-hostable software-license authorization server, and its admin commands.')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'print this help and exit')
    .helpCommand('help [command]', 'print the help of a command')
    .showSuggestionAfterError(true)
    // A command's options are its own: `leases --json` and `leases offline --json` differ.
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      outputError: (message, write) =>
        write(
          message
            .replace(/^error: /, 'keyward: ')
            .split('\n')
            .map((line) => printable(line))
            .join('\n'),
        ),
    });
  register(program);
  program.showHelpAfterError('(keyward --help lists the commands)');
  // A mistake in a command is followed by one line saying where its help is, not the help itself:
  // a screen of usage after the error pushed the error out of sight.
  for (const command of descendants(program)) {
    const path = commandPath(command);
    command.showHelpAfterError(
      command.commands.length > 0
        ? `(${path} --help lists its commands)`
        : `(${path} --help lists its options and examples)`,
    );
  }
  return program;
}

/** `keyward leases offline`: the words that run `command`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/**
 * `keyward help app create` as `keyward app create --help`: commander's help command looks one
 * level down only.
 */
export function helpAsOption(argv: string[]): string[] {
  return argv[0] === 'help' && argv.length > 2 ? [...argv.slice(1), '--help'] : argv;
}
