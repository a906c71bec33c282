import type { FastifyReply } from 'fastify';
import { KeywardError } from '../../../errors/keyward-error.js';
import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { enterpriseContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { Csrf, Field, Notice, type ConsoleError } from '../ui.js';
import { actorOf } from './forms.js';
import { formText } from '../form-fields.js';
import { consoleErrorOf, rowFailure } from './member-errors.js';
import { ACCESS } from '../../access/access.js';

/** Member op 1's fields for one user, as the form sends them (the password is never sent back). */
const PROFILE = ['userName', 'name', 'departmentId', 'passwordMobile', 'remark'] as const;
type Values = Partial<Record<(typeof PROFILE)[number], string>>;

function AddMemberPage(props: { context: ConsoleContext; values?: Values; error?: ConsoleError }) {
  const { context, error } = props;
  const values = props.values ?? { departmentId: '0' };
  const { t } = context;
  return (
    <Layout context={context} title={t('member.addOne')}>
      <Notice context={context} error={error} />
      <p>{t('member.addHint')}</p>
      <form method="post" action="/console/enterprise/members/new">
        <Csrf context={context} />
        <Field
          name="userName"
          label={t('member.userName')}
          value={values.userName}
          required
          maxLength={30}
          error={error}
          autocomplete="off"
        />
        <Field
          name="password"
          label={t('member.password')}
          type="password"
          required
          maxLength={16}
          error={error}
          autocomplete="new-password"
        />
        <Field
          name="name"
          label={t('member.name')}
          value={values.name}
          required
          maxLength={30}
          error={error}
        />
        <Field
          name="departmentId"
          label={t('member.departmentId')}
          type="number"
          value={values.departmentId}
          required
          error={error}
        />
        <Field
          name="passwordMobile"
          label={t('member.mobile')}
          type="tel"
          value={values.passwordMobile}
          error={error}
        />
        <Field name="remark" label={t('member.remark')} value={values.remark} maxLength={200} error={error} />
        <button type="submit">{t('member.addSubmit')}</button>{' '}
        <a href="/console/enterprise">{t('common.cancel')}</a>
      </form>
    </Layout>
  );
}

/** GET and POST /console/enterprise/members/new: one employee by member op 1, by the same rules. */
export function addMemberRoutes(app: App): void {
  app.get(
    '/enterprise/members/new',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => sendPage(reply, <AddMemberPage context={enterpriseContext(request)} />),
  );
  app.post(
    '/enterprise/members/new',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply: FastifyReply) => {
      const context = enterpriseContext(request);
      const values: Values = Object.fromEntries(
        PROFILE.map((name) => [name, formText(request, name).trim()]),
      );
      const user: Record<string, unknown> = { ...values, password: formText(request, 'password') };
      try {
        await app.services.members.add(context.session.member.enterpriseId, [user], actorOf(request));
      } catch (error) {
        const shown = failureOf(context, error);
        if (shown === undefined) throw error;
        return sendPage(reply, <AddMemberPage context={context} values={values} error={shown} />, 422);
      }
      return redirectTo(
        reply,
        `/console/enterprise?${new URLSearchParams({ q: values.userName ?? '', done: 'added' })}`,
      );
    },
  );
}

/** A batch of one that failed (60027) failed for its one user: that user's reason is the error. */
function failureOf(context: ConsoleContext, error: unknown): ConsoleError | undefined {
  if (error instanceof KeywardError && error.code === MemberCode.partialFailure) {
    const data = error.options.data as { failed?: Array<{ message: string }> } | undefined;
    const first = data?.failed?.[0];
    if (first !== undefined) return rowFailure(context.t, first.message);
  }
  return consoleErrorOf(context.t, error);
}
