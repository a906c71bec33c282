import { parseArgs } from 'node:util';
import type { AppView, AppWithSecret, RotatedSecret } from '../../domain/apps/apps.service.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';

const USAGE = `usage:
  keyward app create --name N --scopes auth_order,auth_me [--channels A,B] [--pending] [--json]
  keyward app approve KEY | app list [--json] | app disable KEY
  keyward app rotate-secret KEY [--revoke-tokens] [--json]`;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function printSecret(app: AppWithSecret | RotatedSecret, json: boolean): void {
  if (json) {
    console.log(printableJson(app));
    return;
  }
  console.log(text`appKey:    ${app.appKey}`);
  console.log(text`appSecret: ${app.appSecret}   (shown once: store it now)`);
  console.log(text`scopes:    ${app.scopes.join(',')}`);
  console.log(text`channels:  ${app.channels.join(',') || '-'}`);
  console.log(text`status:    ${app.status}`);
  if ('tokensRevoked' in app) {
    console.log(
      app.tokensRevoked
        ? 'tokens:    revoked (every token issued before is refused from its next call)'
        : 'tokens:    kept (tokens issued before stay valid until they expire; --revoke-tokens ends them)',
    );
  }
}

export async function appCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      channels: { type: 'string' },
      pending: { type: 'boolean', default: false },
      'revoke-tokens': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  switch (action) {
    case 'create': {
      if (values.name === undefined || values.scopes === undefined) throw new CliError(USAGE);
      const app = await adminCall<AppWithSecret>('POST', '/apps', {
        name: values.name,
        scopes: list(values.scopes),
        channels: list(values.channels),
        pending: values.pending,
      });
      printSecret(app, values.json);
      return;
    }
    case 'list': {
      const apps = await adminCall<AppView[]>('GET', '/apps');
      if (values.json) console.log(printableJson(apps));
      else
        for (const a of apps) {
          console.log(
            text`${a.appKey}\t${a.status}\t${a.scopes.join(',')}\t${a.channels.join(',') || '-'}\t${a.name}`,
          );
        }
      return;
    }
    case 'approve':
    case 'disable': {
      const key = positionals[0];
      if (key === undefined) throw new CliError(USAGE);
      const app = await adminCall<AppView>('POST', `/apps/${encodeURIComponent(key)}/${action}`);
      console.log(values.json ? printableJson(app) : text`${app.appKey} is ${app.status}`);
      return;
    }
    case 'rotate-secret': {
      const key = positionals[0];
      if (key === undefined) throw new CliError(USAGE);
      printSecret(
        await adminCall<RotatedSecret>('POST', `/apps/${encodeURIComponent(key)}/rotate-secret`, {
          revokeTokens: values['revoke-tokens'],
        }),
        values.json,
      );
      return;
    }
    default:
      throw new CliError(USAGE);
  }
}
