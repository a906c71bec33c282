import { fillMessage, KeywardError } from '../../errors/keyward-error.js';
import { MemberCode, memberMessages, type MemberCodeValue } from '../../errors/member-codes.js';

// The field rules of DOMAIN.md §7, shared by member ops 1–3 and `keyward member set-password`.
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 16;
export const NAME_MAX = 30;
export const REMARK_MAX = 200;
const USER_NAME = /^[A-Za-z0-9]{2,30}$/;
/** The whole account `<userName>@<enterpriseCode>` stays under this many characters. */
const ACCOUNT_LIMIT = 63;
/** A mainland mobile number, or E.164 (`+`, a country code not starting with 0, at most 15 digits). */
const MOBILE = /^(?:1[3-9][0-9]{9}|\+[1-9][0-9]{6,14})$/;
const DEPARTMENT_ID = /^[0-9]{1,15}$/;

/** Per-user outcomes of op 1 that no code of the spec names: only a message goes back. */
export const ACCOUNT_EXISTS = 'account already exists';
export const ACCOUNT_REPEATED = 'account appears more than once in userList';

/** A problem with one field: the code and its message as the caller sees it. */
export class FieldProblem {
  constructor(
    readonly code: MemberCodeValue,
    readonly message: string,
  ) {}

  toError(cause: string): KeywardError {
    return new KeywardError(this.code, this.message, { cause });
  }
}

function problem(code: MemberCodeValue, ...values: number[]): FieldProblem {
  return new FieldProblem(code, fillMessage(memberMessages[code], ...values));
}

export function accountOf(userName: string, enterpriseCode: string): string {
  return `${userName}@${enterpriseCode}`;
}

/** Login names compare without regard to case (migration 0030's unique index). */
export function accountKey(account: string): string {
  return account.toLowerCase();
}

export function checkUserName(value: unknown, enterpriseCode: string): FieldProblem | undefined {
  if (value === undefined || value === null || value === '') return problem(MemberCode.accountEmpty);
  if (typeof value !== 'string' || !USER_NAME.test(value)) return problem(MemberCode.accountCharacters);
  if (accountOf(value, enterpriseCode).length >= ACCOUNT_LIMIT) return problem(MemberCode.accountCharacters);
  return undefined;
}

/** Length in characters, not UTF-16 units: an emoji counts once. */
export function checkPassword(value: unknown): FieldProblem | undefined {
  if (typeof value !== 'string' || value === '') return problem(MemberCode.passwordEmpty);
  const length = [...value].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    return problem(MemberCode.passwordLength, PASSWORD_MIN, PASSWORD_MAX);
  }
  return undefined;
}

export function checkName(value: unknown): FieldProblem | undefined {
  if (typeof value !== 'string' || value.trim() === '') return problem(MemberCode.nameEmpty);
  if ([...value].length > NAME_MAX) return problem(MemberCode.nameTooLong);
  return undefined;
}

export function checkRemark(value: unknown): FieldProblem | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || [...value].length > REMARK_MAX) return problem(MemberCode.remarkTooLong);
  return undefined;
}

/** A department id as the spec's Long: a JSON integer or a string of digits. */
export function parseDepartmentId(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && DEPARTMENT_ID.test(value)) return Number(value);
  return undefined;
}

export function checkDepartmentId(value: unknown): FieldProblem | undefined {
  return parseDepartmentId(value) === undefined ? problem(MemberCode.groupIdEmpty) : undefined;
}

/** Optional: absent, null or empty means none. */
export function checkMobile(value: unknown): FieldProblem | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !MOBILE.test(value)) return problem(MemberCode.mobileInvalid);
  return undefined;
}

export function optionalText(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
