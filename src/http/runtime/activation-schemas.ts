import { Type } from 'typebox';
import { ACTIVATION_TEXT_LIMIT } from '../../domain/activation/activation.service.js';
import { StringEnum } from '../schema-types.js';

/** A request's typed code or its file's text; the service reads and judges it. */
export const ActivationBody = Type.Object({
  request: Type.String({
    minLength: 1,
    maxLength: ACTIVATION_TEXT_LIMIT,
    description: 'the activation request: its typed code, or the request file’s text (docs/activation.md)',
  }),
});

export const ReturnBody = Type.Object({
  code: Type.String({
    minLength: 1,
    maxLength: ACTIVATION_TEXT_LIMIT,
    description: 'the return code the machine wrote when it deleted its activated lease',
  }),
});

export const Activation = Type.Object({
  leaseId: Type.String(),
  appKey: Type.String(),
  assetNum: Type.String(),
  crmProductId: Type.String(),
  days: Type.Integer(),
  expiresAt: Type.Integer({ description: 'epoch ms: when the lease, and its seat, end' }),
  expBound: StringEnum(['offline-days', 'license-end', 'time-duration'] as const),
  lease: Type.String({ description: 'the signed lease (compact JWS), for the answer file' }),
  code: Type.String({ description: 'the answer’s typed form, for a person to type in' }),
  file: Type.Object({
    keyward: Type.Literal('activation-answer'),
    version: Type.Literal(1),
    leaseId: Type.String(),
    lease: Type.String(),
    code: Type.String(),
    expiresAt: Type.String(),
  }),
});

export const Returned = Type.Object({ leaseId: Type.String(), assetNum: Type.String() });
