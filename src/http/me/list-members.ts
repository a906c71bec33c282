import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { MAX_PAGE_SIZE } from '../../domain/members/members.service.js';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, IntLike, NonceQuery } from '../schema-types.js';
import { adminOnly, EnterpriseParams, MemberPage } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

const Query = Type.Object({
  ...NonceQuery,
  departmentId: Type.Optional(IntLike({ minimum: 0 })),
  keyword: Type.Optional(Type.String({ maxLength: 100 })),
  pageNum: Type.Optional(IntLike({ minimum: 1, maximum: 1_000_000_000 })),
  pageSize: Type.Optional(IntLike({ minimum: 1, maximum: MAX_PAGE_SIZE })),
});

const NUMERIC = ['departmentId', 'pageNum', 'pageSize'] as const;

/** Form-built query strings send `departmentId=` for "no filter": an empty number is absent. */
async function dropEmptyNumbers(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown>;
  for (const name of NUMERIC) if (query[name] === '') delete query[name];
}

/** Member op 5: one page of the enterprise's employees, the administrator included. */
export function listMembersRoute(app: App): void {
  app.get(
    '/enterprise/:enterpriseGlobalId/members',
    {
      config: { access: ACCESS.member },
      preValidation: [adminOnly, dropEmptyNumbers],
      schema: {
        operationId: 'listMembers',
        summary: "List the enterprise's employees, a page at a time (list employees, member op 5)",
        params: EnterpriseParams,
        querystring: Query,
        response: { 200: Envelope(MemberPage) },
      },
    },
    async (request) => {
      const { departmentId, keyword, pageNum, pageSize } = request.query;
      return ok(
        await app.services.members.list(memberOf(request).enterpriseId, {
          ...(departmentId === undefined ? {} : { departmentId }),
          ...(keyword === undefined ? {} : { keyword }),
          ...(pageNum === undefined ? {} : { pageNum }),
          ...(pageSize === undefined ? {} : { pageSize }),
        }),
      );
    },
  );
}
