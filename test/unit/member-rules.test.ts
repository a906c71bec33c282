import { describe, expect, it } from 'vitest';
import {
  checkMobile,
  checkName,
  checkPassword,
  checkUserName,
  parseDepartmentId,
} from '../../src/domain/members/member-rules.js';
import { screenUsers } from '../../src/domain/members/user-screening.js';

const codeOf = (problem: { code: string } | undefined) => problem?.code;

describe('member field rules', () => {
  it('keeps the whole account under 63 characters', () => {
    const longCode = 'c'.repeat(32);
    expect(codeOf(checkUserName('a'.repeat(29), longCode))).toBeUndefined(); // 29 + 1 + 32 = 62
    expect(codeOf(checkUserName('a'.repeat(30), longCode))).toBe('10003'); // 63
  });

  it('counts password characters, not UTF-16 units', () => {
    expect(codeOf(checkPassword('🔑'.repeat(8)))).toBeUndefined();
    expect(codeOf(checkPassword('🔑'.repeat(16)))).toBeUndefined();
    expect(checkPassword('🔑'.repeat(17))?.message).toBe('password length must lie between 8 and 16');
    expect(codeOf(checkName('名'.repeat(30)))).toBeUndefined();
    expect(codeOf(checkName('名'.repeat(31)))).toBe('30002');
  });

  it.each([
    ['13912345678', undefined],
    ['19912345678', undefined],
    ['+8613912345678', undefined],
    ['+12025550123', undefined],
    ['12912345678', '10004'],
    ['1391234567', '10004'],
    ['+0123456789', '10004'],
    ['+1234567890123456', '10004'],
    ['139 1234 5678', '10004'],
  ])('judges the mobile %s', (mobile, code) => {
    expect(codeOf(checkMobile(mobile))).toBe(code);
  });

  it('reads a department id from a number or a string of digits only', () => {
    expect(parseDepartmentId(5)).toBe(5);
    expect(parseDepartmentId('0012')).toBe(12);
    expect(parseDepartmentId(-1)).toBeUndefined();
    expect(parseDepartmentId(1.5)).toBeUndefined();
    expect(parseDepartmentId('1e3')).toBeUndefined();
    expect(parseDepartmentId(null)).toBeUndefined();
  });
});

describe('screening a batch of users', () => {
  const row = (userName: unknown, extra: Record<string, unknown> = {}) => ({
    userName,
    password: 'Passw0rd!',
    name: 'N',
    departmentId: 1,
    ...extra,
  });

  it('reports the account before any other problem, and repeats before field problems', () => {
    const { candidates, rejections } = screenUsers(
      [row('bad name', { password: '' }), row('ok'), row('OK', { password: '' }), row('ok2', { name: '' })],
      'abc123',
    );
    expect(candidates.map((c) => [c.index, c.account])).toEqual([[1, 'ok@abc123']]);
    expect(rejections).toEqual([
      { index: 0, userName: 'bad name', message: 'account may contain only letters and digits' },
      { index: 2, userName: 'OK', message: 'account appears more than once in userList' },
      { index: 3, userName: 'ok2', message: 'name empty' },
    ]);
  });

  it('keeps optional fields empty as null and departments as numbers', () => {
    const { candidates } = screenUsers(
      [row('ok', { departmentId: '7', remark: '', passwordMobile: '' })],
      'abc123',
    );
    expect(candidates[0]).toMatchObject({
      departmentId: 7,
      remark: null,
      passwordMobile: null,
      key: 'ok@abc123',
    });
  });
});
