import {
  OperatorConflictError,
  OperatorInputError,
  OperatorNotFoundError,
  type OperatorRefusal,
} from '../../../domain/operators/operators.service.js';
import type { MessageKey, Translate } from '../i18n/index.js';
import type { ConsoleError } from '../ui.js';

const SENTENCES: Record<OperatorRefusal, MessageKey> = {
  nameEmpty: 'operators.refusal.nameEmpty',
  nameLong: 'operators.refusal.nameLong',
  emailInvalid: 'operators.refusal.emailInvalid',
  emailTaken: 'operators.refusal.emailTaken',
  lastOwner: 'operators.refusal.lastOwner',
  selfDisable: 'operators.refusal.selfDisable',
  roleWider: 'operators.refusal.roleWider',
  days: 'operators.refusal.days',
  operatorDisabled: 'operators.refusal.operatorDisabled',
  passwordLength: 'operators.refusal.passwordLength',
  currentPassword: 'operators.refusal.currentPassword',
  codeWrong: 'operators.refusal.codeWrong',
  codeLocked: 'operators.refusal.codeLocked',
  twoFactorOn: 'operators.refusal.twoFactorOn',
  twoFactorRequired: 'operators.refusal.twoFactorRequired',
  enrolmentChanged: 'operators.refusal.enrolmentChanged',
  enrolFirst: 'operators.refusal.enrolFirst',
  other: 'operators.refusal.other',
};

/**
 * An operators service refusal as the console shows it: the sentence in the reader's language,
 * next to the field the service named (its message starts `field: …`). Anything else is rethrown.
 */
export function operatorRefusal(t: Translate, error: unknown): ConsoleError {
  if (
    !(error instanceof OperatorInputError) &&
    !(error instanceof OperatorConflictError) &&
    !(error instanceof OperatorNotFoundError)
  ) {
    throw error;
  }
  const field = /^([a-zA-Z]+): /.exec(error.message)?.[1];
  return { message: t(SENTENCES[error.reason]), ...(field === undefined ? {} : { field }) };
}
