import type { Client, ClientPathsWithMethod, MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './schema.js';

type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** `query` without `g_nonce`, optional when nothing else in it is required. */
type QueryWithoutNonce<Q> = [Exclude<keyof Q, 'g_nonce'>] extends [never]
  ? { query?: never }
  : [RequiredKeysOf<Omit<Q, 'g_nonce'>>] extends [never]
    ? { query?: Omit<Q, 'g_nonce'> }
    : { query: Omit<Q, 'g_nonce'> };

type WithoutNonce<Operation> = Operation extends { parameters: { query: infer Q } }
  ? {
      [K in keyof Operation]: K extends 'parameters'
        ? Omit<Operation['parameters'], 'query'> & QueryWithoutNonce<Q>
        : Operation[K];
    }
  : Operation;

/** The API's paths as a caller writes them: the client adds `g_nonce` to every call itself. */
export type KeywardPaths = {
  [P in keyof paths]: { [M in keyof paths[P]]: WithoutNonce<paths[P][M]> };
};

export type HttpMethod = 'get' | 'put' | 'post' | 'delete';

/** openapi-fetch's rule: the init argument is optional when nothing in it is required. */
type InitParam<Init> = [RequiredKeysOf<Init>] extends [never]
  ? [(Init & { [key: string]: unknown })?]
  : [Init & { [key: string]: unknown }];

/** The 200 answer's `data`: what the envelope carries on success (undefined when it has none). */
type SuccessData<Operation> = Operation extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body extends { data: infer Data }
    ? Data
    : undefined
  : never;

/** Calls an operation and resolves to the envelope's `data`; failures reject. */
export type DataCall<M extends HttpMethod> = <
  Path extends ClientPathsWithMethod<Client<KeywardPaths>, M>,
  Init extends MaybeOptionalInit<KeywardPaths[Path], M>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<SuccessData<KeywardPaths[Path][M]>>;
