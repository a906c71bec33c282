import type { FastifyRequest } from 'fastify';
import { operatorActor, type AuditActor } from '../../../domain/audit/audit-actions.js';
import type { GrantTermsInput, RelayScope } from '../../../domain/relay/relay-grant.service.js';
import { RELAY_REQUEST_MAX_CHARS } from '../../../domain/relay/relay-request.js';
import { KeywardError } from '../../../errors/keyward-error.js';
import { RuntimeCode } from '../../../errors/runtime-codes.js';
import type { Access } from '../../access/access.js';
import { requestIdsOf } from '../../audit-actor.js';
import { enterpriseContext, operatorContext, type ConsoleContext } from '../context.js';
import { formText } from '../form-fields.js';
import { FORM_LIMIT_BYTES, UPLOAD_LIMIT_BYTES } from '../limits.js';
import { consoleRequest } from '../operator/form.js';
import type { ConsoleError } from '../ui.js';

export type Area = 'enterprise' | 'operator';

/** The three files a Relays page takes, each by the name of its text field. */
export type RelayFile = 'request' | 'report' | 'return';

/**
 * The most a page takes of each, pasted or uploaded. A request is what the service takes; a report
 * may be megabytes (90 days of 100 licenses), more than a console form should read: past the
 * console's upload limit it is imported with `keyward relay import-report`. A return is a few
 * hundred characters (the service refuses one past 4096).
 */
export const RELAY_FILE_LIMITS: Record<RelayFile, number> = {
  request: RELAY_REQUEST_MAX_CHARS,
  report: UPLOAD_LIMIT_BYTES,
  return: 8192,
};

/** A refused text is shown again in its box only when short: a page is not a copy of a report. */
const SHOWN_AGAIN_MAX = 16_384;

/** Who acts, as the services take it: the operator, or the administrator within his enterprise. */
export interface RelayActing {
  context: ConsoleContext;
  actor: AuditActor;
  scope: RelayScope;
}

export function actingAs(area: Area, request: FastifyRequest): RelayActing {
  if (area === 'operator') {
    return {
      context: operatorContext(request),
      actor: operatorActor(consoleRequest(request)),
      scope: {},
    };
  }
  const context = enterpriseContext(request);
  const { member } = context.session;
  // The enterprise's id from the session only: another enterprise's lock is then one that does
  // not exist for the service, whatever the file names.
  return {
    context,
    actor: { appId: null, operator: member.account, ...requestIdsOf(request) },
    scope: { enterpriseId: member.enterpriseId },
  };
}

/** What a form posted: the text box, else the uploaded file's text; `tooLong` past its limit. */
export interface PostedFile {
  text: string;
  tooLong: boolean;
}

export function postedFile(request: FastifyRequest, name: RelayFile): PostedFile {
  const limit = RELAY_FILE_LIMITS[name];
  const typed = formText(request, name).trim();
  // A pasted text past the field's size arrives cut (busboy truncates it at the route's
  // fieldSize, one byte past the limit): cut, it would only fail its signature.
  if (typed !== '') return { text: typed, tooLong: Buffer.byteLength(typed) > limit };
  const upload = (request.body as Record<string, unknown> | null | undefined)?.[`${name}File`];
  if (!Buffer.isBuffer(upload)) return { text: '', tooLong: false };
  return { text: upload.toString('utf8').trim(), tooLong: upload.length > limit };
}

/** The most a form posting `name` reads: its text typed or uploaded, and the form's short fields. */
export function relayFormBodyLimit(name: RelayFile): number {
  return 2 * RELAY_FILE_LIMITS[name] + FORM_LIMIT_BYTES;
}

/**
 * The route's options for a form posting `name`: its text may span lines (a file's text, pasted),
 * up to its limit, and the body holds it typed or uploaded besides the form's short fields.
 */
export function relayFormOptions(name: RelayFile, access: Access) {
  return {
    bodyLimit: relayFormBodyLimit(name),
    config: {
      access,
      // The grant form's machines: one fingerprint per line.
      multilineFields: name === 'request' ? [name, 'machines'] : [name],
      multipartOptions: { limits: { fieldSize: RELAY_FILE_LIMITS[name] + 1 } },
    },
  };
}

/** The grant form's fields beside the request: the machines listed and the overage allowed. */
export type GrantTermField = 'machines' | 'overage';

/**
 * The terms the grant form posted, as the service takes them: one fingerprint per line (none:
 * any machine), and the overage as typed (the service says what is wrong with it).
 */
export function postedTerms(request: FastifyRequest): GrantTermsInput {
  const listed = formText(request, 'machines');
  // Past the form's field size the list arrives cut, its last fingerprint shortened to another:
  // refused whole rather than granted to a machine nobody named.
  if (Buffer.byteLength(listed) > RELAY_FILE_LIMITS.request) {
    const message = `machines: longer than ${Math.floor(RELAY_FILE_LIMITS.request / 1024)} KiB; give a longer list with keyward relay grant --machines-file`;
    throw new KeywardError(RuntimeCode.validation, message, { cause: message });
  }
  const machines = listed
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const overage = formText(request, 'overage').trim();
  return {
    ...(machines.length === 0 ? {} : { machines }),
    ...(overage === '' ? {} : { overage: /^\d{1,9}$/.test(overage) ? Number(overage) : Number.NaN }),
  };
}

/**
 * The refusal of a form as the page shows it: the service's sentence, next to its field (the
 * grant form's terms by the field the sentence names).
 */
export function refusalOf(context: ConsoleContext, error: unknown, field: RelayFile): ConsoleError {
  if (!(error instanceof KeywardError)) throw error;
  const term = /^(machines|overage)\b/.exec(error.message)?.[1];
  return {
    code: error.code,
    message: context.t('relays.refused', { message: error.message }),
    field: field === 'request' && term !== undefined ? term : field,
  };
}

export function tooLongOf(context: ConsoleContext, field: RelayFile): ConsoleError {
  return {
    message: context.t('relays.tooLong', { field, kib: Math.floor(RELAY_FILE_LIMITS[field] / 1024) }),
    field,
  };
}

/** The status a refused form is answered with: the service's own (404, 409), else 400. */
export function refusalStatus(error: unknown): number {
  const status = error instanceof KeywardError ? error.options.httpStatus : undefined;
  return status !== undefined && status >= 400 && status < 500 ? status : 400;
}

/** The refused text, to be shown again in its box when it is short enough. */
export function shownAgain(posted: PostedFile): string | undefined {
  return posted.text.length <= SHOWN_AGAIN_MAX ? posted.text : undefined;
}
