import { KeywardError } from '../../../errors/keyward-error.js';
import { MemberCode, memberMessages, type MemberCodeValue } from '../../../errors/member-codes.js';
import { ACCOUNT_EXISTS, ACCOUNT_REPEATED } from '../../../domain/members/member-rules.js';
import type { MessageKey, Translate } from '../i18n/index.js';
import type { ConsoleError } from '../ui.js';

/** The form fields a member-center failure can be about: the names the console's inputs carry. */
export type MemberField =
  | 'userName'
  | 'password'
  | 'name'
  | 'departmentId'
  | 'remark'
  | 'passwordMobile'
  | 'assetNum'
  | 'account'
  | 'lock'
  | 'assetIds'
  | 'file';

/** Each field's label, so a per-row failure of a CSV import can name the field it is about. */
export const FIELD_LABELS: Record<MemberField, MessageKey> = {
  userName: 'member.userName',
  password: 'member.password',
  name: 'member.name',
  departmentId: 'member.departmentId',
  remark: 'member.remark',
  passwordMobile: 'member.mobile',
  assetNum: 'asset.number',
  account: 'asset.employeeAccount',
  lock: 'lent.lock',
  assetIds: 'lent.assets',
  file: 'import.file',
};

interface Explained {
  key: MessageKey;
  field?: MemberField;
}

/** Every member-center code: the sentence a person reads and, when it is about one, the field. */
export const MEMBER_ERRORS: Record<MemberCodeValue, Explained> = {
  '80001': { key: 'code.80001' },
  '40000': { key: 'code.40000' },
  '40021': { key: 'code.40021', field: 'file' },
  '60013': { key: 'code.60013', field: 'file' },
  '40008': { key: 'code.40008', field: 'userName' },
  '40001': { key: 'code.40001', field: 'password' },
  '40009': { key: 'code.40009', field: 'departmentId' },
  '40022': { key: 'code.40022', field: 'name' },
  '50003': { key: 'code.50003', field: 'password' },
  '30002': { key: 'code.30002', field: 'name' },
  '30003': { key: 'code.30003', field: 'remark' },
  '10003': { key: 'code.10003', field: 'userName' },
  '10004': { key: 'code.10004', field: 'passwordMobile' },
  '40006': { key: 'code.40006' },
  '60009': { key: 'code.60009' },
  '60027': { key: 'code.60027' },
  '60002': { key: 'code.60002' },
  '60017': { key: 'code.60017' },
  '60024': { key: 'code.60024', field: 'assetNum' },
  '60023': { key: 'code.60023' },
  '60025': { key: 'code.60025', field: 'assetNum' },
  '60026': { key: 'code.60026', field: 'account' },
  '60028': { key: 'code.60028', field: 'assetNum' },
  '33006': { key: 'code.33006', field: 'assetIds' },
  '33003': { key: 'code.33003' },
  '33007': { key: 'code.33007', field: 'assetIds' },
  '33008': { key: 'code.33008', field: 'lock' },
  '33018': { key: 'code.33018', field: 'lock' },
  '33009': { key: 'code.33009' },
};

/** Op 1's per-user outcomes that carry no code: only their message comes back. */
const UNCODED: Record<string, Explained> = {
  [ACCOUNT_EXISTS]: { key: 'code.accountExists', field: 'userName' },
  [ACCOUNT_REPEATED]: { key: 'code.accountRepeated', field: 'userName' },
};

const isMemberCode = (code: string): code is MemberCodeValue => code in MEMBER_ERRORS;

/** The numbers a message template carried ({0}, {1}), to fill the translated sentence. */
function numbersIn(message: string): Record<string, string> {
  const found = message.match(/\d+/g) ?? [];
  return Object.fromEntries(found.map((n, i) => [String(i), n]));
}

function explain(
  t: Translate,
  code: string | undefined,
  explained: Explained,
  message: string,
): ConsoleError {
  return {
    ...(code === undefined ? {} : { code }),
    message: t(explained.key, numbersIn(message)),
    ...(explained.field === undefined ? {} : { field: explained.field }),
  };
}

/** A member-center failure as the console shows it; anything else is not ours to explain. */
export function consoleErrorOf(t: Translate, error: unknown, field?: MemberField): ConsoleError | undefined {
  if (!(error instanceof KeywardError) || !isMemberCode(error.code)) return undefined;
  const shown = explain(t, error.code, MEMBER_ERRORS[error.code], error.message);
  return field === undefined ? shown : { ...shown, field };
}

/** Message templates as patterns: `{0}` stands for a number. */
const TEMPLATES = (Object.entries(memberMessages) as Array<[MemberCodeValue, string]>).map(
  ([code, template]) => {
    const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{\d+\\\}/g, '\\d+');
    return { code, pattern: new RegExp(`^${escaped}$`) };
  },
);

/** One rejected user of op 1, known only by its message: its code found again from the templates. */
export function rowFailure(t: Translate, message: string): ConsoleError {
  const uncoded = UNCODED[message];
  if (uncoded !== undefined) return explain(t, undefined, uncoded, message);
  const match = TEMPLATES.find((entry) => entry.pattern.test(message));
  if (match === undefined) return { message };
  return explain(t, match.code, MEMBER_ERRORS[match.code], message);
}

/** Codes that mean "not in your enterprise": pages answer them with 404. */
export const NOT_YOURS: ReadonlySet<string> = new Set([MemberCode.userNotFound, MemberCode.memberNotMatched]);
