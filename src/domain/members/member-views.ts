import type { MemberRecord } from './members.repository.js';

/** Member op 1's record: numeric ids, as the spec types them. */
export interface AddedMemberView {
  id: number;
  userId: number;
  globalId: string;
  enterpriseId: number;
  departmentId: number | null;
  departmentName: string | null;
  userName: string;
  name: string;
  remark: string | null;
  deleted: boolean;
  updateTime: number;
  createTime: number;
}

/** Member op 5's record: the same ids as strings, as the spec types them. */
export interface ListedMemberView {
  id: string;
  userId: string;
  globalId: string;
  enterpriseId: string;
  departmentId: number | null;
  departmentName: string | null;
  userName: string;
  passwordMobile: string | null;
  name: string;
  assetNums: string[];
  borrowNum: string | null;
  onlineFlag: boolean;
  remark: string | null;
  deleted: boolean;
  updateTime: number;
  createTime: number;
  boundUserInfo: null;
}

// A member is its own user: there is no separate user store, so `userId` repeats `id`.
// `userName` is the full account (`alice@abc123`), the name a member logs in with.

export function addedView(m: MemberRecord): AddedMemberView {
  return {
    id: m.id,
    userId: m.id,
    globalId: m.globalId,
    enterpriseId: m.enterpriseId,
    departmentId: m.departmentId,
    departmentName: m.departmentName,
    userName: m.account,
    name: m.name ?? '',
    remark: m.remark,
    deleted: m.deleted,
    updateTime: m.updatedAt,
    createTime: m.createdAt,
  };
}

export function listedView(m: MemberRecord, assetNums: string[], borrowNum: string | null): ListedMemberView {
  return {
    id: String(m.id),
    userId: String(m.id),
    globalId: m.globalId,
    enterpriseId: String(m.enterpriseId),
    departmentId: m.departmentId,
    departmentName: m.departmentName,
    userName: m.account,
    passwordMobile: m.passwordMobile,
    name: m.name ?? '',
    assetNums,
    borrowNum,
    // Set only when a session marks a member online; no such session exists yet.
    onlineFlag: false,
    remark: m.remark,
    deleted: m.deleted,
    updateTime: m.updatedAt,
    createTime: m.createdAt,
    boundUserInfo: null,
  };
}
