import {
  ACCOUNT_REPEATED,
  accountKey,
  accountOf,
  checkDepartmentId,
  checkMobile,
  checkName,
  checkPassword,
  checkRemark,
  checkUserName,
  optionalText,
  parseDepartmentId,
} from './member-rules.js';

/** A row of op 1's `userList` that passed every field rule. */
export interface Candidate {
  index: number;
  userName: string;
  account: string;
  key: string;
  password: string;
  name: string;
  departmentId: number;
  remark: string | null;
  passwordMobile: string | null;
}

/** A row that will not be created, with what the caller is told about it. */
export interface Rejection {
  index: number;
  userName: string;
  message: string;
}

/** The `userName` a rejected row is reported under: what the caller sent, as text. */
function echoName(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' ? String(value) : '';
}

/**
 * Member op 1's per-user checks, in DOMAIN.md §7's order: the account first (empty, characters
 * and length, repeated in this batch), then password, name, remark, department and mobile.
 * Only the first occurrence of an account is considered; later ones are rejected as repeats.
 */
export function screenUsers(
  rows: ReadonlyArray<Record<string, unknown>>,
  enterpriseCode: string,
): { candidates: Candidate[]; rejections: Rejection[] } {
  const candidates: Candidate[] = [];
  const rejections: Rejection[] = [];
  const seen = new Set<string>();
  rows.forEach((row, index) => {
    const reject = (message: string) => rejections.push({ index, userName: echoName(row.userName), message });
    const accountProblem = checkUserName(row.userName, enterpriseCode);
    if (accountProblem) return reject(accountProblem.message);
    const userName = row.userName as string;
    const account = accountOf(userName, enterpriseCode);
    const key = accountKey(account);
    if (seen.has(key)) return reject(ACCOUNT_REPEATED);
    seen.add(key);
    const problem =
      checkPassword(row.password) ??
      checkName(row.name) ??
      checkRemark(row.remark) ??
      checkDepartmentId(row.departmentId) ??
      checkMobile(row.passwordMobile);
    if (problem) return reject(problem.message);
    candidates.push({
      index,
      userName,
      account,
      key,
      password: row.password as string,
      name: row.name as string,
      departmentId: parseDepartmentId(row.departmentId) as number,
      remark: optionalText(row.remark),
      passwordMobile: optionalText(row.passwordMobile),
    });
  });
  return { candidates, rejections };
}
