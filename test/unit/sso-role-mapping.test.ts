import { describe, expect, it } from 'vitest';
import { groupsOf, roleFor } from '../../src/domain/sso/role-mapping.js';

const MAP = new Map([
  ['owners', 'owner'],
  ['admins', 'admin'],
  ['support', 'support'],
  ['auditors', 'auditor'],
] as const);

describe('groups to roles', () => {
  it('gives the widest role of the mapped groups, none for unmapped ones', () => {
    expect(roleFor(['auditors', 'support'], MAP)).toBe('support');
    expect(roleFor(['support', 'owners', 'staff'], MAP)).toBe('owner');
    expect(roleFor(['auditors'], MAP)).toBe('auditor');
    expect(roleFor(['staff', 'OWNERS'], MAP)).toBeUndefined();
    expect(roleFor([], MAP)).toBeUndefined();
  });

  it('reads a claim as an array, or a space-separated string; anything else lists no group', () => {
    expect(groupsOf(['a', 1, 'b', null])).toEqual(['a', 'b']);
    expect(groupsOf('a  b')).toEqual(['a', 'b']);
    expect(groupsOf(undefined)).toEqual([]);
    expect(groupsOf({ owners: true })).toEqual([]);
  });
});
