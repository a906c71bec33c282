import { isEmbedded, type Db } from '../../db/client.js';
import { fillMessage, KeywardError } from '../../errors/keyward-error.js';
import { MemberCode, memberMessages } from '../../errors/member-codes.js';
import type { AuditActor, AuditChange } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { CallBatcher } from '../shared/call-batcher.js';
import { newGlobalId } from '../shared/ids.js';
import { enterpriseTenant, hashPassword } from '../shared/passwords.js';
import { TokensRepository } from '../tokens/tokens.repository.js';
import { LoginRepository } from './login.repository.js';
import {
  ACCOUNT_EXISTS,
  accountKey,
  checkMobile,
  checkName,
  checkPassword,
  checkRemark,
  optionalText,
} from './member-rules.js';
import { AccountClaims } from './account-claims.js';
import { MemberPageCache } from './member-page-cache.js';
import { assignmentChange, memberChange } from './member-audit.js';
import { addedView, listedView, type AddedMemberView, type ListedMemberView } from './member-views.js';
import {
  MembersRepository,
  type EnterpriseSeats,
  type MemberRecord,
  type ProfileChanges,
} from './members.repository.js';
import { pageInfo, type PageInfo } from './page-info.js';
import { screenUsers, type Candidate, type Rejection } from './user-screening.js';

export const MAX_USERS_PER_CALL = 100;
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 500;

/**
 * Version lookups of op 5 calls that arrive together share one statement, as order op 3's reads
 * do (ADR 0010).
 */
const VERSIONS_PER_STATEMENT = 200;
const VERSION_LOOKUPS_IN_FLIGHT = { postgres: 2, embedded: 1 } as const;

/**
 * Gives back, inside the deleting transaction, whatever else a deleted member holds, and answers
 * the audit rows of what it gave back. Lending (member op 10) registers the release of the
 * member's lent lock here.
 */
export type MemberReleaseHook = (
  trx: Db,
  member: { id: number; enterpriseId: number },
) => Promise<AuditChange[]>;

export interface AddMembersResult {
  succeeded: AddedMemberView[];
  failed: Array<{ userName: string; message: string }>;
}

export interface ProfileInput {
  userName?: string;
  name?: string;
  departmentId?: number;
  remark?: string | null;
  passwordMobile?: string | null;
}

export interface ListQuery {
  departmentId?: number;
  keyword?: string;
  pageNum?: number;
  pageSize?: number;
}

function notFound(memberGlobalId: string): KeywardError {
  return new KeywardError(MemberCode.userNotFound, memberMessages[MemberCode.userNotFound], {
    cause: `no member ${memberGlobalId} in this enterprise`,
  });
}

function limitMessage(limit: number): string {
  return fillMessage(memberMessages[MemberCode.memberLimit], limit);
}

/** Member-center ops 1–5 within the caller's enterprise; another enterprise's members are absent. */
export class MembersService {
  private readonly releaseOnDelete: MemberReleaseHook[];
  private readonly claims = new AccountClaims();
  private readonly pages: MemberPageCache<PageInfo<ListedMemberView>>;
  private readonly pageVersions: CallBatcher<number, string>;

  constructor(
    private readonly db: Db,
    options: {
      releaseOnDelete?: MemberReleaseHook[];
      /** Members op 5's kept pages may hold in all (about 1 KB each); 0 keeps none. */
      keptPageMembers?: number;
    } = {},
  ) {
    this.releaseOnDelete = options.releaseOnDelete ?? [];
    this.pages = new MemberPageCache(options.keptPageMembers ?? 10_000);
    const repo = new MembersRepository(db);
    this.pageVersions = new CallBatcher(
      (enterpriseIds) => repo.pageVersions(enterpriseIds),
      isEmbedded(db) ? VERSION_LOOKUPS_IN_FLIGHT.embedded : VERSION_LOOKUPS_IN_FLIGHT.postgres,
      VERSIONS_PER_STATEMENT,
    );
  }

  /** Op 1. Per-user problems go to `failed`; any of them makes the answer 60027 with the data. */
  async add(
    enterpriseId: number,
    userList: ReadonlyArray<Record<string, unknown>> | undefined,
    actor: AuditActor,
  ) {
    if (userList === undefined || userList.length === 0) {
      throw new KeywardError(MemberCode.userListEmpty, memberMessages[MemberCode.userListEmpty], {
        cause: 'userList: must not be empty',
      });
    }
    if (userList.length > MAX_USERS_PER_CALL) {
      throw new KeywardError(MemberCode.tooManyUsers, memberMessages[MemberCode.tooManyUsers], {
        cause: `userList: ${userList.length} users, at most ${MAX_USERS_PER_CALL}`,
      });
    }
    const repo = new MembersRepository(this.db);
    const seats = await repo.findSeats(enterpriseId);
    if (!seats) throw new Error(`enterprise ${enterpriseId} of an admitted member is missing`);
    if (seats.code === '') {
      throw new KeywardError(MemberCode.suffixEmpty, memberMessages[MemberCode.suffixEmpty], {
        cause: 'the enterprise has no code to append to accounts',
      });
    }
    const { candidates, rejections } = screenUsers(userList, seats.code);
    const release = await this.claims.claim(candidates.map((c) => c.key));
    let created: MemberRecord[];
    try {
      created = await this.insertCandidates(enterpriseId, candidates, rejections, actor);
    } finally {
      release();
    }

    const result: AddMembersResult = {
      succeeded: created.map(addedView),
      failed: rejections
        .sort((a, b) => a.index - b.index)
        .map((r) => ({ userName: r.userName, message: r.message })),
    };
    if (result.failed.length > 0) {
      throw new KeywardError(MemberCode.partialFailure, memberMessages[MemberCode.partialFailure], {
        cause: `${result.failed.length} of ${userList.length} users were not added`,
        data: result,
      });
    }
    return result;
  }

  /**
   * Op 1 past the per-user checks, while its accounts are claimed: passwords are hashed only for
   * users that are neither taken nor over the member limit now, and the transaction checks both
   * again under a lock. The members it adds are audited in one insert.
   */
  private async insertCandidates(
    enterpriseId: number,
    candidates: Candidate[],
    rejections: Rejection[],
    actor: AuditActor,
  ): Promise<MemberRecord[]> {
    const repo = new MembersRepository(this.db);
    const taken = await repo.takenAccounts(
      enterpriseId,
      candidates.map((c) => c.key),
    );
    const fresh = candidates.filter((c) => {
      if (taken.has(c.key))
        rejections.push({ index: c.index, userName: c.userName, message: ACCOUNT_EXISTS });
      return !taken.has(c.key);
    });
    // Read after the claim: a call that held these accounts may have filled seats meanwhile.
    const hopeful = this.fitSeats(fresh, await repo.findSeats(enterpriseId), rejections);
    const tenant = enterpriseTenant(enterpriseId);
    const hashes = await Promise.all(hopeful.map((c) => hashPassword(c.password, tenant)));

    return this.db.transaction().execute(async (trx) => {
      const tx = new MembersRepository(trx);
      const accepted = this.fitSeats(hopeful, await tx.findSeats(enterpriseId, { lock: true }), rejections);
      const inserted = await tx.insertMany(
        accepted.map((c, i) => ({
          globalId: newGlobalId(),
          enterpriseId,
          userName: c.userName,
          account: c.account,
          passwordHash: hashes[i] as string,
          name: c.name,
          departmentId: c.departmentId,
          remark: c.remark,
          passwordMobile: c.passwordMobile,
        })),
      );
      const created = this.matchInserted(accepted, inserted, rejections);
      await new AuditRepository(trx).record(
        actor,
        created.map((m) => memberChange('member.added', m, { departmentId: m.departmentId })),
      );
      return created;
    });
  }

  /** The candidates the enterprise's free seats take, in order; the rest are rejected over the limit. */
  private fitSeats(
    candidates: Candidate[],
    seats: EnterpriseSeats | undefined,
    rejections: Rejection[],
  ): Candidate[] {
    const limit = seats?.memberLimit ?? null;
    if (limit === null) return candidates;
    const room = Math.max(0, limit - (seats?.memberCount ?? 0));
    for (const c of candidates.slice(room)) {
      rejections.push({ index: c.index, userName: c.userName, message: limitMessage(limit) });
    }
    return candidates.slice(0, room);
  }

  /** Inserted rows in input order; a row skipped by a concurrent insert of its account is rejected. */
  private matchInserted(
    accepted: Candidate[],
    inserted: MemberRecord[],
    rejections: Rejection[],
  ): MemberRecord[] {
    const byKey = new Map(inserted.map((m) => [accountKey(m.account), m]));
    const created: MemberRecord[] = [];
    for (const c of accepted) {
      const record = byKey.get(c.key);
      if (record) created.push(record);
      else rejections.push({ index: c.index, userName: c.userName, message: ACCOUNT_EXISTS });
    }
    return created;
  }

  /** Op 2: name, department, remark and mobile; the account name stays. Audited: which fields. */
  async edit(
    enterpriseId: number,
    memberGlobalId: string,
    input: ProfileInput,
    actor: AuditActor,
  ): Promise<void> {
    const { userName, ...changes } = input;
    if (Object.values(changes).every((v) => v === undefined)) {
      throw new KeywardError(MemberCode.paramEmpty, memberMessages[MemberCode.paramEmpty], {
        cause: 'body: give at least one of name, departmentId, remark, passwordMobile',
      });
    }
    const repo = new MembersRepository(this.db);
    const member = await repo.find(enterpriseId, memberGlobalId);
    if (!member) throw notFound(memberGlobalId);
    if (userName !== undefined && !this.sameUserName(member, userName)) {
      throw new KeywardError(MemberCode.paramEmpty, memberMessages[MemberCode.paramEmpty], {
        cause: 'userName: cannot be changed',
      });
    }
    const problem =
      (changes.name === undefined ? undefined : checkName(changes.name)) ??
      checkRemark(changes.remark) ??
      checkMobile(changes.passwordMobile);
    if (problem) throw problem.toError(problem.message);
    const update: ProfileChanges = {
      ...(changes.name === undefined ? {} : { name: changes.name }),
      ...(changes.departmentId === undefined ? {} : { departmentId: changes.departmentId }),
      ...(changes.remark === undefined ? {} : { remark: optionalText(changes.remark) }),
      ...(changes.passwordMobile === undefined
        ? {}
        : { passwordMobile: optionalText(changes.passwordMobile) }),
    };
    await this.db.transaction().execute(async (trx) => {
      if (!(await new MembersRepository(trx).updateProfile(enterpriseId, member.id, update))) {
        throw notFound(memberGlobalId);
      }
      // Names of the fields, not their values: a mobile number is no business of the log's.
      const fields = Object.keys(update).sort();
      await new AuditRepository(trx).record(actor, [memberChange('member.edited', member, { fields })]);
    });
  }

  /** Clients echo either the bare name or the full account; both mean "unchanged". */
  private sameUserName(member: MemberRecord, userName: string): boolean {
    const given = userName.toLowerCase();
    return given === member.userName.toLowerCase() || given === accountKey(member.account);
  }

  /** Op 3: a new password; every token of the member dies with the old one. */
  async resetPassword(
    enterpriseId: number,
    memberGlobalId: string,
    password: string | undefined,
    actor: AuditActor,
  ): Promise<void> {
    const member = await new MembersRepository(this.db).find(enterpriseId, memberGlobalId);
    if (!member) throw notFound(memberGlobalId);
    const problem = checkPassword(password);
    if (problem) throw problem.toError(problem.message);
    const hash = await hashPassword(password as string, enterpriseTenant(enterpriseId));
    await this.db.transaction().execute(async (trx) => {
      if (!(await new MembersRepository(trx).updatePassword(enterpriseId, member.id, hash))) {
        throw notFound(memberGlobalId);
      }
      await new TokensRepository(trx).revokeForMember(member.id);
      await new LoginRepository(trx).clear(accountKey(member.account));
      await new AuditRepository(trx).record(actor, [
        memberChange('member.password_reset', member, { tokensRevoked: true }),
      ]);
    });
  }

  /**
   * Op 4: soft delete; its assets go back to the enterprise and its tokens stop, all at once,
   * audited with each asset and lent lock it gave back.
   */
  async delete(enterpriseId: number, memberGlobalId: string, actor: AuditActor): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const repo = new MembersRepository(trx);
      const member = await repo.find(enterpriseId, memberGlobalId, { lock: true });
      if (!member) throw notFound(memberGlobalId);
      if (member.identity === 'admin') {
        throw new KeywardError(MemberCode.permission, memberMessages[MemberCode.permission], {
          cause: 'the enterprise administrator cannot be deleted',
        });
      }
      await repo.softDelete(enterpriseId, member.id);
      const assets = await repo.releaseAssignments(enterpriseId, member.id);
      const changes: AuditChange[] = [
        memberChange('member.deleted', member, { assetsReleased: assets.length }),
        ...assets.map((a) => assignmentChange('asset.unassigned', a, member, { reason: 'member_deleted' })),
      ];
      for (const release of this.releaseOnDelete) {
        changes.push(...(await release(trx, { id: member.id, enterpriseId })));
      }
      await new TokensRepository(trx).revokeForMember(member.id);
      await new AuditRepository(trx).record(actor, changes);
    });
  }

  /**
   * Live members of the enterprise by global id, for pages that name who holds an asset; at most
   * MAX_PAGE_SIZE ids a call. Another enterprise's ids are simply absent.
   */
  async findByGlobalIds(enterpriseId: number, globalIds: string[]): Promise<Map<string, MemberRecord>> {
    const ids = [...new Set(globalIds)].slice(0, MAX_PAGE_SIZE);
    const found = await new MembersRepository(this.db).findMany(enterpriseId, ids);
    return new Map(found.map((m) => [m.globalId, m]));
  }

  /**
   * Op 5: one page in creation order, wrapped as PageHelper's PageInfo. A page read before is
   * answered again while the enterprise's page version has not moved since (MemberPageCache); the
   * answer is then the same as a fresh read's. The caller must not change it.
   */
  async list(enterpriseId: number, query: ListQuery): Promise<PageInfo<ListedMemberView>> {
    const pageNum = query.pageNum ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const filter = {
      ...(query.departmentId === undefined ? {} : { departmentId: query.departmentId }),
      ...(query.keyword === undefined || query.keyword === ''
        ? {}
        : { keyword: query.keyword.toLowerCase() }),
    };
    const key = JSON.stringify([enterpriseId, filter.departmentId, filter.keyword, pageNum, pageSize]);
    // Only a page kept before is worth the version lookup; a first read goes straight to the page.
    if (this.pages.has(key)) {
      const kept = this.pages.get(key, await this.pageVersions.submit(enterpriseId));
      if (kept !== undefined) return kept;
    }
    const { total, members, version } = await new MembersRepository(this.db).listPage(
      enterpriseId,
      filter,
      (pageNum - 1) * pageSize,
      pageSize,
    );
    const list = members.map((m) => listedView(m, m.assetNums, m.borrowNum));
    const page = pageInfo(pageNum, pageSize, total, list);
    this.pages.set(key, version, page, list.length);
    return page;
  }
}
