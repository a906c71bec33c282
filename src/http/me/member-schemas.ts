import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { memberOf } from '../guards/principal.js';
import { requireAdmin, requireAdminOrSelf } from '../guards/member-guard.js';
import { Nullable } from '../schema-types.js';

export const EnterpriseParams = Type.Object({
  enterpriseGlobalId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const MemberParams = Type.Object({
  enterpriseGlobalId: Type.String({ minLength: 1, maxLength: 100 }),
  memberGlobalId: Type.String({ minLength: 1, maxLength: 100 }),
});

// Permission is checked before the body is validated, so a plain member learns nothing from
// validation messages of operations it may not call.
export async function adminOnly(request: FastifyRequest): Promise<void> {
  requireAdmin(memberOf(request));
}

export async function adminOrSelf(request: FastifyRequest): Promise<void> {
  const params = request.params as { memberGlobalId?: string };
  requireAdminOrSelf(memberOf(request), params.memberGlobalId ?? '');
}

/** Member op 1's record. */
export const AddedMember = Type.Object({
  id: Type.Integer(),
  userId: Type.Integer(),
  globalId: Type.String(),
  enterpriseId: Type.Integer(),
  departmentId: Nullable(Type.Integer()),
  departmentName: Nullable(Type.String()),
  userName: Type.String({ description: 'the full account, userName@enterpriseCode' }),
  name: Type.String(),
  remark: Nullable(Type.String()),
  deleted: Type.Boolean(),
  updateTime: Type.Integer({ description: 'epoch milliseconds' }),
  createTime: Type.Integer({ description: 'epoch milliseconds' }),
});

/** Member op 5's record: ids as strings. */
export const ListedMember = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  globalId: Type.String(),
  enterpriseId: Type.String(),
  departmentId: Nullable(Type.Integer()),
  departmentName: Nullable(Type.String()),
  userName: Type.String({ description: 'the full account, userName@enterpriseCode' }),
  passwordMobile: Nullable(Type.String()),
  name: Type.String(),
  assetNums: Type.Array(Type.String()),
  borrowNum: Nullable(Type.String()),
  onlineFlag: Type.Boolean(),
  remark: Nullable(Type.String()),
  deleted: Type.Boolean(),
  updateTime: Type.Integer(),
  createTime: Type.Integer(),
  boundUserInfo: Type.Null(),
});

/** MyBatis PageHelper's PageInfo, field for field (DOMAIN.md §7). */
export const MemberPage = Type.Object({
  pageNum: Type.Integer(),
  pageSize: Type.Integer(),
  size: Type.Integer(),
  orderBy: Type.Null(),
  startRow: Type.Integer(),
  endRow: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
  list: Type.Array(ListedMember),
  firstPage: Type.Integer(),
  prePage: Type.Integer(),
  nextPage: Type.Integer(),
  lastPage: Type.Integer(),
  isFirstPage: Type.Boolean(),
  isLastPage: Type.Boolean(),
  hasPreviousPage: Type.Boolean(),
  hasNextPage: Type.Boolean(),
  navigatePages: Type.Integer(),
  navigatepageNums: Type.Array(Type.Integer()),
});
