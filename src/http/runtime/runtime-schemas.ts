import { Type } from 'typebox';
import { IntLike, Nullable } from '../schema-types.js';

/** A machine's fingerprint as the licensed software computes it: opaque, printable, bounded. */
export const Fingerprint = Type.String({
  minLength: 8,
  maxLength: 256,
  pattern: '^[\\x21-\\x7e]+$',
  description: "the machine's fingerprint: 8–256 printable ASCII characters, no spaces",
});

export const LeaseParams = Type.Object({
  leaseId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-f-]+$' }),
});

export const FingerprintBody = Type.Object({ fingerprint: Fingerprint });

/** The `Idempotency-Key` header of a call a client may retry (consume). */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description:
    'one key per logical call, 1–255 printable ASCII characters: a repeat within 24 hours answers the first result',
});

const Product = Type.Object({
  crmProductId: Nullable(Type.String()),
  productUri: Nullable(Type.String()),
  productName: Nullable(Type.String()),
});

const Limits = Type.Object({
  concurrent: Nullable(Type.Integer({ description: 'seats (limitConcurrent); null: no limit' })),
  timeDurationSeconds: Nullable(Type.Integer({ description: 'accumulated usage allowed, seconds' })),
  amount: Nullable(Type.Integer({ description: 'consumption allowed (limitAmount)' })),
  startDate: Nullable(Type.Integer({ description: 'valid from, epoch ms' })),
  endDate: Nullable(Type.Integer({ description: 'valid until, epoch ms' })),
});

export const LeaseAnswer = Type.Object({
  leaseId: Type.String(),
  status: Type.Union([Type.Literal('granted'), Type.Literal('resumed')], {
    description: '`granted` a new seat; `resumed` the live lease this holder and machine already had',
  }),
  assetNum: Type.String({ description: 'the asset whose product the lease runs' }),
  expiresAt: Type.Integer({ description: 'epoch ms; heartbeat before it or lose the seat' }),
  heartbeatIntervalSeconds: Type.Integer(),
  product: Product,
  limits: Limits,
  offlineLease: Nullable(
    Type.String({
      description: 'compact JWS (EdDSA) of the offline lease; verify with /.well-known/jwks.json',
    }),
  ),
});

export const HeartbeatAnswer = Type.Object({
  leaseId: Type.String(),
  expiresAt: Type.Integer({ description: 'epoch ms' }),
  heartbeatIntervalSeconds: Type.Integer(),
  usedSeconds: Type.Integer({ description: "this lease's accumulated use" }),
});

export const Amount = IntLike({ minimum: 1, maximum: 1_000_000_000 });
