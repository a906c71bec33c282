import type { Command } from 'commander';
import type { RotatedKey, RuntimeKeyList } from '../../domain/runtime-keys/runtime-keys.service.js';
import { adminCall } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface JsonOption {
  json?: boolean;
}

async function rotate(options: JsonOption): Promise<void> {
  const rotated = await adminCall<RotatedKey>('POST', '/runtime/keys/rotate');
  if (options.json === true) {
    console.log(printableJson(rotated));
    return;
  }
  console.log(text`kid:         ${rotated.kid}   (signs offline leases from now on)`);
  console.log(text`previousKid: ${rotated.previousKid}   (retired; still published, so its leases verify)`);
}

async function list(options: JsonOption): Promise<void> {
  const listed = await adminCall<RuntimeKeyList>('GET', '/runtime/keys');
  if (options.json === true) {
    console.log(printableJson(listed));
    return;
  }
  console.log('kid\tcreated\tretired\tcurrent');
  for (const key of listed.keys) {
    const created = new Date(key.createdAt).toISOString();
    const retired = key.retiredAt === null ? '-' : new Date(key.retiredAt).toISOString();
    console.log(text`${key.kid}\t${created}\t${retired}\t${key.current ? 'yes' : '-'}`);
  }
  if (listed.source === 'variable') {
    console.log('The current key is set by RUNTIME_SIGNING_KEY.');
  }
}

/** `keyward keys rotate|list`: the keys that sign offline leases. */
export function registerKeysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('the keys that sign offline leases; every one stays published at /.well-known/jwks.json')
    .addHelpText('after', examples(['keyward keys list', 'keyward keys rotate --json']));
  keys
    .command('rotate')
    .description('sign offline leases with a new key from now on; the previous one stays published')
    .option('--json', 'print one JSON object: kid, previousKid')
    .addHelpText(
      'after',
      [
        '',
        'The previous key is marked retired but stays in the JWKS: leases it signed verify until they',
        'expire. When RUNTIME_SIGNING_KEY sets the key this is refused: set a new key there and',
        'restart; the old public key stays published.',
        examples(['keyward keys rotate', 'keyward keys rotate --json']),
      ].join('\n'),
    )
    .action(rotate);
  keys
    .command('list')
    .description('list the published signing keys, one a line (tab-separated, with a header)')
    .option(
      '--json',
      'print one JSON object: source (variable or file) and keys [{kid, createdAt, retiredAt, current}], times in epoch milliseconds',
    )
    .addHelpText('after', examples(['keyward keys list', 'keyward keys list --json']))
    .action(list);
}
