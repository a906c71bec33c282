import { Option, type Command } from 'commander';
import { CliError, serverUrl, unreachable } from '../admin-client.js';
import { printable, printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface TokenOptions {
  appKey: string;
  appSecret: string;
  scope?: string;
  json?: boolean;
}

async function token(options: TokenOptions): Promise<void> {
  // An empty variable counts as given to commander; it is no credential.
  if (options.appKey === '') throw new CliError('no app key: give --app-key or set KEYWARD_APP_KEY');
  if (options.appSecret === '')
    throw new CliError('no app secret: give --app-secret or set KEYWARD_APP_SECRET');
  const base = serverUrl();
  // Loaded on use, as for the demo: no other command needs the typed client.
  const { requestAppToken, KeywardAuthError } = await import('../../keyward-client.js');
  let answer: Awaited<ReturnType<typeof requestAppToken>>;
  try {
    answer = await requestAppToken({
      baseUrl: base,
      appKey: options.appKey,
      appSecret: options.appSecret,
      // Space-separated on the wire; commas accepted too, as `app create --scopes` takes them.
      ...(options.scope === undefined
        ? {}
        : {
            scope: options.scope
              .split(/[\s,]+/)
              .filter(Boolean)
              .join(' '),
          }),
    });
  } catch (error) {
    if (error instanceof KeywardAuthError) {
      throw new CliError(`the server refused the token: ${printable(error.message)}`);
    }
    // fetch fails with a TypeError when nothing answers at `base`.
    if (error instanceof TypeError) throw unreachable(base);
    throw error;
  }
  console.log(options.json === true ? printableJson(answer) : text`${answer.access_token}`);
}

/** `keyward token`: an app token for scripts, `TOKEN=$(keyward token)`. */
export function registerTokenCommand(program: Command): void {
  program
    .command('token')
    .description("get an app token (client_credentials) from the server's /oauth2/token and print it alone")
    .addOption(
      new Option('--app-key <APP_KEY>', "the application's appKey")
        .env('KEYWARD_APP_KEY')
        .makeOptionMandatory(),
    )
    .addOption(
      new Option(
        '--app-secret <APP_SECRET>',
        "the application's appSecret; prefer the variable, which stays out of the shell history and process list",
      )
        .env('KEYWARD_APP_SECRET')
        .makeOptionMandatory(),
    )
    .option(
      '--scope <SCOPES>',
      "only these of the application's scopes (auth_order, auth_me, auth_runtime, auth_webhooks; space or comma separated)",
    )
    .option(
      '--json',
      'print the whole token answer as one JSON object: access_token, token_type, expires_in, scope',
    )
    .addHelpText(
      'after',
      examples([
        'export KEYWARD_APP_KEY=kw_… KEYWARD_APP_SECRET=…',
        'TOKEN=$(npx keyward token --scope auth_order)',
        'curl -s -X POST "http://127.0.0.1:8080/order/api/order/v1/shellnums?g_nonce=$(openssl rand -hex 12)" \\',
        `  -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"size":3}'`,
      ]),
    )
    .action(token);
}
