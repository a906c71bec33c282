import { isOperatorRole } from '../../../domain/operators/roles.js';
import { operatorMay } from '../../access/access.js';
import type { App } from '../../app-type.js';
import { operatorContext } from '../context.js';
import { formText } from '../form-fields.js';
import type { ConsoleError } from '../ui.js';
import { consoleRequest } from './form.js';
import { operatorRefusal } from './operator-errors.js';
import { showOperators } from './operators.js';

/**
 * The owner's actions on the operators page: add, role, disable, enable, reset the password or
 * the second factor, and the rule that everyone signs in with two factors. The same services as
 * `keyward operator …`, audited naming the owner. A one-time password is shown once, on the page
 * the action answers with (no redirect that would have to carry it).
 */
export function operatorActionRoutes(app: App): void {
  const manage = { config: { access: operatorMay('operators') } };
  const { operators, twoFactor } = app.services;

  app.post('/operator/operators', manage, async (request, reply) => {
    const { t } = operatorContext(request);
    const role = formText(request, 'role');
    // The form always sends one of its roles: anything else is refused, never read as a default.
    if (!isOperatorRole(role)) {
      const error = { message: t('operators.refusal.roleUnknown'), field: 'role' };
      return showOperators(app, request, reply, { error, status: 400 });
    }
    try {
      const added = await operators.add(
        { name: formText(request, 'name'), email: formText(request, 'email'), role },
        consoleRequest(request),
      );
      return await showOperators(app, request, reply, {
        done: t('operators.added', { email: added.operator.email }),
        password: { email: added.operator.email, password: added.password },
      });
    } catch (error) {
      return showOperators(app, request, reply, { error: operatorRefusal(t, error), status: 400 });
    }
  });

  type ById = { Params: { id: string } };
  /** An action's refusal of its own form (not the service's): shown as the service's are. */
  class FormRefusal extends Error {
    constructor(readonly refusal: ConsoleError) {
      super(refusal.message);
    }
  }
  const act = (
    path: string,
    run: (id: string, request: Parameters<typeof consoleRequest>[0]) => Promise<string>,
  ) =>
    app.post<ById>(`/operator/operators/:id/${path}`, manage, async (request, reply) => {
      const { t } = operatorContext(request);
      try {
        return await showOperators(app, request, reply, { done: await run(request.params.id, request) });
      } catch (error) {
        const refusal = error instanceof FormRefusal ? error.refusal : operatorRefusal(t, error);
        return showOperators(app, request, reply, { error: refusal, status: 400 });
      }
    });

  act('role', async (id, request) => {
    const role = formText(request, 'role');
    const { t } = operatorContext(request);
    // As on add: the form sends one of its roles, and anything else is refused, not ignored.
    if (!isOperatorRole(role))
      throw new FormRefusal({ message: t('operators.refusal.roleUnknown'), field: 'role' });
    const changed = await operators.setRole(id, role, consoleRequest(request));
    return t('operators.roleSet', { email: changed.email, role: t(`operators.role.${role}`) });
  });
  act('disable', async (id, request) => {
    const changed = await operators.setStatus(id, 'disabled', consoleRequest(request));
    return operatorContext(request).t('operators.disabledDone', {
      email: changed.email,
      tokens: changed.tokensRevoked,
    });
  });
  act('enable', async (id, request) => {
    const changed = await operators.setStatus(id, 'active', consoleRequest(request));
    return operatorContext(request).t('operators.enabledDone', { email: changed.email });
  });
  act('reset-two-factor', async (id, request) => {
    await twoFactor.reset(id, consoleRequest(request));
    return operatorContext(request).t('operators.twoFactorResetDone');
  });

  app.post<ById>('/operator/operators/:id/reset', manage, async (request, reply) => {
    const { t } = operatorContext(request);
    try {
      const reset = await operators.resetPassword(request.params.id, consoleRequest(request));
      return await showOperators(app, request, reply, {
        done: t('operators.resetDone', { email: reset.operator.email }),
        password: { email: reset.operator.email, password: reset.password },
      });
    } catch (error) {
      return showOperators(app, request, reply, { error: operatorRefusal(t, error), status: 400 });
    }
  });

  const wholePlatform = { config: { ...manage.config, effect: 'whole-platform' as const } };
  app.post('/operator/operators/two-factor-rule', wholePlatform, async (request, reply) => {
    const { t } = operatorContext(request);
    const required = formText(request, 'required') === 'on';
    try {
      await twoFactor.setRequired(required, consoleRequest(request));
    } catch (error) {
      return showOperators(app, request, reply, { error: operatorRefusal(t, error), status: 400 });
    }
    return showOperators(app, request, reply, {
      done: t(required ? 'operators.requiredOn' : 'operators.requiredOff'),
    });
  });
}
