import type { Command } from 'commander';
import type { OperatorTokenView, OperatorView } from '../../domain/operators/operators.service.js';
import { OPERATOR_ROLES, permissionsOf } from '../../domain/operators/roles.js';
import { adminCall, CliError } from '../admin-client.js';
import { printableJson, text } from '../printable.js';
import { examples } from '../program.js';

interface JsonOption {
  json?: boolean;
}

const at = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());
const path = (operator: string) => `/operators/${encodeURIComponent(operator)}`;

function role(value: string): string {
  if (!(OPERATOR_ROLES as readonly string[]).includes(value)) {
    throw new CliError(`role must be one of ${OPERATOR_ROLES.join(', ')}; got ${value}`);
  }
  return value;
}

function printOperator(o: OperatorView): void {
  console.log(text`${o.id}\t${o.role}\t${o.status}\t${o.email}\t${o.name}`);
}

function printPassword(result: { operator: OperatorView; password: string }, json: boolean): void {
  if (json) {
    console.log(printableJson(result));
    return;
  }
  console.log(text`operator: ${result.operator.email} (${result.operator.role}), id ${result.operator.id}`);
  console.log(
    text`password: ${result.password}   (one-time, shown once: it must be changed at first sign-in)`,
  );
}

function printTokens(tokens: OperatorTokenView[], json: boolean): void {
  if (json) {
    console.log(printableJson(tokens));
    return;
  }
  console.log('id\trole\texpires\trevoked\tlastUsed\tname');
  for (const t of tokens) {
    console.log(
      text`${t.id}\t${t.role}\t${at(t.expiresAt)}\t${at(t.revokedAt)}\t${at(t.lastUsedAt)}\t${t.name}`,
    );
  }
}

interface TokenCreateOptions extends JsonOption {
  operator?: string;
  name: string;
  role?: string;
  days?: string;
}

async function createToken(options: TokenCreateOptions): Promise<void> {
  const where = options.operator === undefined ? '/operators/me/tokens' : `${path(options.operator)}/tokens`;
  const days = options.days === undefined ? undefined : Number(options.days);
  if (days !== undefined && !Number.isInteger(days))
    throw new CliError(`--days must be a whole number; got ${options.days}`);
  const created = await adminCall<{ token: string; view: OperatorTokenView }>('POST', where, {
    name: options.name,
    ...(options.role === undefined ? {} : { role: role(options.role) }),
    ...(days === undefined ? {} : { days }),
  });
  if (options.json === true) {
    console.log(printableJson(created));
    return;
  }
  console.log(text`token:   ${created.token}   (shown once: keep it now, e.g. with keyward login)`);
  console.log(text`id:      ${created.view.id}`);
  console.log(text`role:    ${created.view.role}`);
  console.log(text`expires: ${at(created.view.expiresAt)}`);
}

/**
 * `keyward operator two-factor reset OPERATOR | require on|off|status`: a lost authenticator, and
 * the owner's rule that everyone signing in with a password has a second factor.
 */
function registerTwoFactorCommands(operator: Command): void {
  const twoFactor = operator.command('two-factor').description('second factors (TOTP) of operators');
  twoFactor
    .command('reset')
    .description("remove an operator's second factor and recovery codes (a lost phone)")
    .argument('<OPERATOR>', 'id or email')
    .action(async (who: string) => {
      await adminCall('POST', `${path(who)}/two-factor/reset`);
      console.log(
        text`${who}: second factor removed; they set it up again at their next sign-in if required`,
      );
    });
  twoFactor
    .command('require')
    .description('whether everyone who signs in with a password must have a second factor')
    .argument('<SETTING>', 'on | off | status')
    .option('--json', 'print one JSON object: required')
    .action(async (setting: string, options: JsonOption) => {
      if (!['on', 'off', 'status'].includes(setting)) {
        throw new CliError(`the setting must be on, off or status; got ${setting}`);
      }
      const rule =
        setting === 'status'
          ? await adminCall<{ required: boolean }>('GET', '/operators/two-factor-rule')
          : await adminCall<{ required: boolean }>('POST', '/operators/two-factor-rule', {
              required: setting === 'on',
            });
      if (options.json === true) console.log(printableJson(rule));
      else
        console.log(rule.required ? 'two factors required of everyone' : 'two factors up to each operator');
    });
}

/** `keyward operator add|list|role|disable|enable|reset|two-factor|token`: the platform's named operators. */
export function registerOperatorCommands(program: Command): void {
  const operator = program
    .command('operator')
    .description('the operators of the platform: named people with roles, and their personal API tokens')
    .addHelpText(
      'after',
      `
Roles: ${OPERATOR_ROLES.map((r) => `${r} (${permissionsOf(r).join(', ')})`).join('; ')}.
${examples([
  'keyward operator add --name "Ada Lee" --email ada@example.com --role owner',
  'keyward operator token create --operator ada@example.com --name laptop --days 90',
  'keyward login < token.txt',
  'keyward operator role bob@example.com support',
])}`,
    );
  operator
    .command('add')
    .description('add an operator; a one-time password is printed once')
    .requiredOption('--name <NAME>', 'the person, as the audit log will name them')
    .requiredOption('--email <EMAIL>', 'their email, unique among operators')
    .requiredOption('--role <ROLE>', OPERATOR_ROLES.join(' | '))
    .option('--json', 'print one JSON object: operator, password')
    .action(async (options: JsonOption & { name: string; email: string; role: string }) => {
      const added = await adminCall<{ operator: OperatorView; password: string }>('POST', '/operators', {
        name: options.name,
        email: options.email,
        role: role(options.role),
      });
      printPassword(added, options.json === true);
    });
  operator
    .command('list')
    .description('list the operators (tab-separated: id, role, status, email, name)')
    .option('--json', 'print one JSON array')
    .action(async (options: JsonOption) => {
      const operators = await adminCall<OperatorView[]>('GET', '/operators');
      if (options.json === true) {
        console.log(printableJson(operators));
        return;
      }
      console.log('id\trole\tstatus\temail\tname');
      operators.forEach(printOperator);
    });
  operator
    .command('role')
    .description("change an operator's role (the last active owner stays one)")
    .argument('<OPERATOR>', 'id or email')
    .argument('<ROLE>', OPERATOR_ROLES.join(' | '))
    .option('--json', 'print the operator as JSON')
    .action(async (who: string, newRole: string, options: JsonOption) => {
      const changed = await adminCall<OperatorView>('POST', `${path(who)}/role`, { role: role(newRole) });
      if (options.json === true) console.log(printableJson(changed));
      else console.log(text`${changed.email}: ${changed.role}`);
    });
  for (const [name, description] of [
    ['disable', 'disable an operator: their tokens are revoked at once'],
    ['enable', 'enable a disabled operator again (their old tokens stay revoked)'],
  ] as const) {
    operator
      .command(name)
      .description(description)
      .argument('<OPERATOR>', 'id or email')
      .option('--json', 'print the operator as JSON')
      .action(async (who: string, options: JsonOption) => {
        const changed = await adminCall<OperatorView & { tokensRevoked: number }>(
          'POST',
          `${path(who)}/${name}`,
        );
        if (options.json === true) console.log(printableJson(changed));
        else
          console.log(text`${changed.email}: ${changed.status}, ${changed.tokensRevoked} token(s) revoked`);
      });
  }
  operator
    .command('reset')
    .description('give an operator a new one-time password, printed once')
    .argument('<OPERATOR>', 'id or email')
    .option('--json', 'print one JSON object: operator, password')
    .action(async (who: string, options: JsonOption) => {
      printPassword(await adminCall('POST', `${path(who)}/reset`), options.json === true);
    });

  operator
    .command('sign-out')
    .description("end every console session of an operator at once (yours with 'me'); tokens stay")
    .argument('<OPERATOR>', "id or email, or 'me'")
    .option('--json', 'print the operator as JSON')
    .action(async (who: string, options: JsonOption) => {
      const where = who === 'me' ? '/operators/me' : path(who);
      const done = await adminCall<OperatorView>('POST', `${where}/sign-out-everywhere`);
      if (options.json === true) console.log(printableJson(done));
      else console.log(text`${done.email}: every console session ended`);
    });

  registerTwoFactorCommands(operator);

  const token = operator
    .command('token')
    .description('personal API tokens: named, with a role and an expiry');
  token
    .command('create')
    .description('create a token (your own, or with --operator an operator’s: owners only); printed once')
    .requiredOption('--name <NAME>', 'what it is for: a laptop, a CI job')
    .option('--operator <OPERATOR>', 'id or email of the operator it is for (default: you)')
    .option('--role <ROLE>', "no wider than the operator's role (default: the operator's)")
    .option('--days <DAYS>', 'days until it expires, 1 to 366 (default 90)')
    .option('--json', 'print one JSON object: token, view')
    .action(createToken);
  token
    .command('list')
    .description('list tokens (yours, or with --operator an operator’s)')
    .option('--operator <OPERATOR>', 'id or email')
    .option('--json', 'print one JSON array')
    .action(async (options: JsonOption & { operator?: string }) => {
      const where =
        options.operator === undefined ? '/operators/me/tokens' : `${path(options.operator)}/tokens`;
      printTokens(await adminCall<OperatorTokenView[]>('GET', where), options.json === true);
    });
  token
    .command('revoke')
    .description('revoke a token (yours; owners: anyone’s with --any)')
    .argument('<TOKEN_ID>', "the token's id (not the token)")
    .option('--any', "revoke another operator's token (owners)")
    .option('--json', 'print the token as JSON')
    .action(async (id: string, options: JsonOption & { any?: boolean }) => {
      const where =
        options.any === true
          ? `/operator-tokens/${encodeURIComponent(id)}/revoke`
          : `/operators/me/tokens/${encodeURIComponent(id)}/revoke`;
      const revoked = await adminCall<OperatorTokenView>('POST', where);
      if (options.json === true) console.log(printableJson(revoked));
      else console.log(text`${revoked.id}: revoked ${at(revoked.revokedAt)}`);
    });
}
