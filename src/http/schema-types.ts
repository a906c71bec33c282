import { Type, type TSchema, type TUnsafe } from 'typebox';

/** An integer that may arrive as a string of digits (see the `x-int` keyword). */
export function IntLike(bounds: { minimum?: number; maximum?: number } = {}): TUnsafe<number> {
  return Type.Unsafe<number>({
    'x-int': bounds,
    // For the OpenAPI document only: what a client may send.
    anyOf: [
      { type: 'integer', ...bounds },
      { type: 'string', pattern: '^-?[0-9]+$' },
    ],
  });
}

/** A closed set of strings, validated strictly. */
export function StringEnum<const T extends readonly string[]>(values: T): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** The success envelope around `data`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({
    code: Type.Literal(0),
    message: Type.String(),
    data,
  });
}

export const EnvelopeNoData = Type.Object({ code: Type.Literal(0), message: Type.String() });

export const FailureEnvelope = Type.Object({
  code: Type.String({ description: 'business code, digits' }),
  message: Type.String(),
  cause: Type.String(),
  data: Type.Optional(Type.Unknown()),
});

export const NonceQuery = {
  g_nonce: Type.String({ description: 'one-time random string, 8–64 of A-Za-z0-9_-' }),
};

/** Runtime calls whose replay is harmless: a nonce, when sent, must be well-formed; none is recorded. */
export const OptionalNonceQuery = {
  g_nonce: Type.Optional(
    Type.String({ description: 'optional here, and not recorded: a replay of this call is harmless' }),
  ),
};
