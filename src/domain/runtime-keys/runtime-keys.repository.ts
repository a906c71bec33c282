import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { jsonbText } from '../../db/json.js';
import type { Ed25519PublicJwk } from './ed25519.js';

export interface PublishedKey {
  kid: string;
  publicJwk: Ed25519PublicJwk;
  createdAt: Date;
  retiredAt: Date | null;
}

/** The public keys every instance publishes; a kid is its key's thumbprint, so rows never conflict. */
export class RuntimeKeysRepository {
  constructor(private readonly db: Db) {}

  /** Records keys unless they are there already (another instance, an earlier start). */
  async register(
    keys: ReadonlyArray<{ kid: string; publicJwk: Ed25519PublicJwk; createdAt?: Date }>,
  ): Promise<void> {
    if (keys.length === 0) return;
    await this.db
      .insertInto('runtime_signing_keys')
      .values(
        keys.map((key) => ({
          kid: key.kid,
          public_jwk: jsonbText(key.publicJwk),
          ...(key.createdAt === undefined ? {} : { created_at: key.createdAt }),
        })),
      )
      .onConflict((oc) => oc.column('kid').doNothing())
      .execute();
  }

  /** Retires a key now, unless it was retired before. */
  async retire(kid: string): Promise<void> {
    await this.db
      .updateTable('runtime_signing_keys')
      .set({ retired_at: sql<Date>`now()` })
      .where('kid', '=', kid)
      .where('retired_at', 'is', null)
      .execute();
  }

  /** Every key ever registered, oldest first. */
  async list(): Promise<PublishedKey[]> {
    const rows = await this.db
      .selectFrom('runtime_signing_keys')
      .select(['kid', 'public_jwk', 'created_at', 'retired_at'])
      .orderBy('created_at')
      .orderBy('kid')
      .execute();
    return rows.map((row) => ({
      kid: row.kid,
      publicJwk: row.public_jwk,
      createdAt: row.created_at,
      retiredAt: row.retired_at,
    }));
  }
}
